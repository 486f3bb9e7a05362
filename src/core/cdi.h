/*
 * cdi.h - containers (docs/containers.md): the names of nvtaskset's CDI
 * devices and what each gives, and what a CDI hook reads from the OCI
 * runtime (its state, the container's configuration, a user namespace's
 * uid map) and what -l reads of a process's container (its cgroup). Pure:
 * no I/O, no allocation.
 *
 * A device is CLASS=NAME of the vendor given to nvtaskset --cdi
 * (NVT_CDI_VENDOR unless told): "gpc=0-3" (GPCs 0-3 of every GPU the
 * container uses, as -g 0-3), "gpc=1:0-3" (of GPU 1 only), "tpcs=16" (16
 * TPCs claimed race-free when the container starts, as -n 16
 * --exclude-running), "tpcs=1:16", "priority=high" (as --priority high),
 * "priority=high-slice" (as --priority high --yield slice), "mem=16G" (a GPU
 * memory limit of 16 GiB on each GPU, as --mem 16G), "mem=1:16G" (on GPU 1
 * only).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_CDI_H
#define NVT_CDI_H

#include <stddef.h>
#include <stdint.h>

#define NVT_CDI_VENDOR "nvtaskset"
/* The longest vendor name nvtaskset writes (CDI allows more). */
#define NVT_CDI_VENDOR_MAX 64
/* "priority=normal-slice", "gpc=15:63-63", "tpcs=15:256", "mem=63:4096G", with room. */
#define NVT_CDI_DEVICE_TEXT_MAX 32
/* GPU numbers a device name may carry: nvtaskset's GPUs (src/gpu/gpu.h). */
#define NVT_CDI_GPU_MAX 64

enum nvt_cdi_class {
	NVT_CDI_GPC = 0,      /* whole GPCs by index: a partition fixed in the spec */
	NVT_CDI_TPCS = 1,     /* a count of TPCs, claimed race-free by the hook */
	NVT_CDI_PRIORITY = 2, /* a priority, with or without a partition device */
	NVT_CDI_MEM = 3,      /* a GPU memory limit, with or without a partition device */
};
#define NVT_CDI_CLASSES 4
/* The largest memory device, in GiB (more than any GPU holds). */
#define NVT_CDI_MEM_GIB_MAX 4096

struct nvt_cdi_device {
	int cls;              /* enum nvt_cdi_class */
	int gpu;              /* the GPU's number, or -1: every GPU the container uses */
	unsigned first, last; /* NVT_CDI_GPC: GPCs first to last */
	unsigned count;       /* NVT_CDI_TPCS: TPCs to claim, 1 to NVT_MAX_TPCS */
	uint8_t prio;         /* NVT_CDI_PRIORITY: enum nvt_prio, not NVT_PRIO_NONE */
	uint8_t slice;        /* NVT_CDI_PRIORITY: 1: time-sliced ("-slice": --yield slice) */
	unsigned mem_gib;     /* NVT_CDI_MEM: the limit in GiB, 1 to NVT_CDI_MEM_GIB_MAX */
};

/* "gpc", "tpcs", "priority", "mem"; NULL for another value. */
const char *nvt_cdi_class_name(int cls);
/* Writes d's NAME (what follows CLASS=). Returns its length, or -1 if it does not fit. */
int nvt_cdi_name_format(const struct nvt_cdi_device *d, char *buf, size_t len);
/* Writes "CLASS=NAME". Returns its length, or -1 if it does not fit. */
int nvt_cdi_device_format(const struct nvt_cdi_device *d, char *buf, size_t len);
/* Parses "CLASS=NAME", only as nvt_cdi_device_format writes it (no leading
 * zeros, first < last). Returns 0, or -1 if text is no such device. */
int nvt_cdi_device_parse(const char *text, struct nvt_cdi_device *out);
/* 1 if vendor may name a CDI vendor (a letter, then letters, digits, '-',
 * '_' and '.', ending in a letter or digit; shorter than NVT_CDI_VENDOR_MAX). */
int nvt_cdi_vendor_valid(const char *vendor);
/*
 * The shared MPS daemon's pipe directory of a spec with MPS, from that of
 * level's daemon (its name, "low"), which --cdi --with-mps makes the shared
 * one's with "-LEVEL" after it: level_pipe without that ending, into out
 * (size bytes), where a time-sliced device's hook binds level_pipe (the
 * container's CUDA_MPS_PIPE_DIRECTORY must be it). Returns 0, or -1 if
 * level_pipe does not end so or out is too small.
 */
int nvt_cdi_shared_pipe(const char *level_pipe, const char *level, char *out, size_t size);

/* ---- What the OCI runtime gives a hook ------------------------------------ */

#define NVT_OCI_PATH_MAX 4096

/* The container's state, as the runtime writes it to a hook's standard input. */
struct nvt_oci_state {
	long pid;                      /* its first process, as the runtime's /proc numbers it; 0: none */
	char bundle[NVT_OCI_PATH_MAX]; /* the bundle directory (holds config.json) */
	char id[128];                  /* the container's id */
};
/* Reads the state (text, text_len bytes). Returns 0, or -1 with the reason in why. */
int nvt_oci_state_parse(const char *text, size_t text_len, struct nvt_oci_state *out,
			char *why, size_t len);
/*
 * Whether config.json (text, text_len bytes) may be read at all: a JSON object in
 * which no object names a member twice, nor one that the readers below take
 * spelled otherwise (names compared as Go's encoding/json matches them with
 * fields: in any case). Runtimes differ in how they read such a text: runc
 * merges a repeated object into the one before it and takes a name in any
 * case, so it could run with values the hook never read. Returns 0, or -1
 * with the reason in why. The hook checks this before it reads anything else.
 */
int nvt_oci_config_check(const char *text, size_t text_len, char *why, size_t len);
/* The user the container's process runs as (process.user.uid and .gid of its
 * config.json; 0 where not given, as runtimes take it). Returns 0, or -1
 * with the reason in why. */
int nvt_oci_config_user(const char *text, size_t text_len, uint32_t *uid, uint32_t *gid,
			char *why, size_t len);
/*
 * The value of variable name in the container's environment (process.env of
 * config.json; the first of several, as getenv finds it) into buf (size
 * bytes). Returns 0, 1 if it is not set, or -1 if the configuration is
 * malformed or the value does not fit (a variable too long to read whose
 * name cannot be told from name's counts as name's).
 */
int nvt_oci_config_env(const char *text, size_t len, const char *name, char *buf, size_t size);
/*
 * Whether the container's environment sets name to anything but value (NULL:
 * to anything at all), in any of its variables of that name: runtimes differ
 * in which of two they hand the program. Returns 1, 0, or -1 as
 * nvt_oci_config_env (malformed, or a variable too long to tell).
 */
int nvt_oci_config_env_other(const char *text, size_t len, const char *name, const char *value);
/*
 * The container's root file system (config.json's root.path: absolute, or
 * relative to bundle) into buf. Returns 0, or -1 if it names none or does not
 * fit.
 */
int nvt_oci_config_root(const char *text, size_t len, const char *bundle, char *buf, size_t size);
/*
 * Whether config.json runs a hook of stage ("createRuntime") with argument
 * arg: what the runtime was given (a CDI device's hook), which a container's
 * variables cannot add. Returns 1, 0, or -1 if the configuration is malformed.
 */
int nvt_oci_config_has_hook(const char *text, size_t len, const char *stage, const char *arg);

/*
 * Maps id through a user namespace's uid_map (text, len bytes: lines "INSIDE
 * OUTSIDE COUNT"): the id outside. Returns 0, or -1 if the map does not map
 * it (or is malformed).
 */
int nvt_uid_map_outside(const char *text, size_t len, uint32_t id, uint32_t *out);
/* 1 if the uid_map maps every id to itself (the initial namespace's "0 0 4294967295"). */
int nvt_uid_map_is_identity(const char *text, size_t len);

/*
 * The container a process runs in, from its /proc/PID/cgroup (text, len
 * bytes): the 64-digit id in the deepest cgroup named for one (podman's
 * libpod-ID, docker-ID.scope or /docker/ID, cri-containerd-ID.scope,
 * crio-ID.scope, or a component of 64 hexadecimal digits, as Kubernetes
 * names its containers'), its first 12 digits into id (13 bytes). Returns 0,
 * or -1 if none is named.
 */
#define NVT_CONTAINER_ID_TEXT 13
int nvt_cgroup_container(const char *text, size_t len, char *id, size_t size);

#endif /* NVT_CDI_H */
