# Unit tests and the parser fuzz target. Sourced by tests/run-tests.sh: each t_NAME function is one test,
# run in a subshell under set -e with the helpers defined there.
# shellcheck shell=bash

t_unit_tpcset() { "$T/test_tpcset"; }
t_unit_tmd() { "$T/test_tmd"; }
t_unit_topo() { "$T/test_topo"; }
t_unit_mpslog() { "$T/test_mpslog"; }
t_unit_driverinfo() { "$T/test_driverinfo"; }
t_unit_segment() { timeout "$HANG" "$T/test_segment"; }
t_unit_claim() { timeout "$HANG" "$T/test_claim"; }
t_fuzz_parsers() { FUZZ_SECONDS=${FUZZ_SECONDS:-3} timeout "$HANG" "$T/fuzz_parsers"; }
t_unit_gpusel() { "$T/test_gpusel"; }
t_unit_ptree() { "$T/test_ptree"; }
t_unit_proc() { timeout "$HANG" "$T/test_proc"; }
t_unit_child() { timeout "$HANG" "$T/test_child"; }
t_unit_profile() { "$T/test_profile"; }
t_unit_slurm() { "$T/test_slurm"; }
t_unit_prio() { "$T/test_prio"; }
t_unit_yield() { "$T/test_yield"; }
t_unit_smcount() { "$T/test_smcount"; }
t_unit_memlimit() { "$T/test_memlimit"; }
t_unit_memmap() { "$T/test_memmap"; }
t_unit_cmdline() { "$T/test_cmdline"; }
t_unit_task() { "$T/test_task"; }
t_unit_admit() { "$T/test_admit"; }
t_unit_gpus() { "$T/test_gpus"; }
t_unit_membw() { "$T/test_membw"; }
t_unit_cdi() { "$T/test_cdi"; }
t_unit_promtext() { "$T/test_promtext"; }
t_unit_queuerec() { "$T/test_queuerec"; }
t_unit_view() { "$T/test_view"; }
t_unit_segscan() { timeout "$HANG" "$T/test_segscan"; }
t_unit_segscan_namespaces() { timeout "$HANG" "$T/test_segscan" namespaces; }
