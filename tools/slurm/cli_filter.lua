--[[
cli_filter.lua - nvtaskset's client-side filter for Slurm (CliFilterPlugins=cli_filter/lua).

Turns the nvtaskset SPANK plugin's options into the count GRES `tpc`, by which
slurmctld counts TPCs and queues a job until enough are free:

  --gpu-tpcs=N   ->  --gres=tpc:N
  --gpu-gpcs=N   ->  --gres=tpc:(N * GPC_TPCS)

added to any --gres the user gave (one that names tpc already is left as it
is). The plugin, on the node, places the
granted TPCs on one GPU (whole GPCs for --gpu-gpcs). Install it as
cli_filter.lua beside slurm.conf, or call nvtaskset_gres(options) from the
slurm_cli_pre_submit of a cli_filter.lua that you have already.

SPDX-License-Identifier: MIT
]]

-- TPCs Slurm counts for one GPC of --gpu-gpcs: the largest GPC of your GPUs
-- (`nvtaskset --topology`; 9 on the H100 and H200 we measured).
local GPC_TPCS = 9

function nvtaskset_gres(options)
	local spank = options.spank and options.spank["nvtaskset"]
	if spank == nil then
		return slurm.SUCCESS
	end
	local tpcs, gpcs = tonumber(spank["gpu-tpcs"]), tonumber(spank["gpu-gpcs"])
	local count
	if tpcs ~= nil then
		count = tpcs
	elseif gpcs ~= nil then
		count = gpcs * GPC_TPCS
	else
		return slurm.SUCCESS
	end
	local gres = options.gres
	if gres ~= nil and string.find("," .. gres .. ",", "[,:]tpc[:=(,]") then
		-- Asked already (--gres=tpc:N, or SLURM_GRES in a job): the plugin
		-- checks that what Slurm grants covers the option.
		return slurm.SUCCESS
	end
	if gres == nil or gres == "" or gres == "none" then
		options.gres = "tpc:" .. count
	else
		options.gres = gres .. ",tpc:" .. count
	end
	return slurm.SUCCESS
end

function slurm_cli_setup_defaults(options, early)
	return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
	return nvtaskset_gres(options)
end

function slurm_cli_post_submit(offset, jobid, stepid)
	return slurm.SUCCESS
end
