/*
 * mps.h - finding, starting, querying and stopping NVIDIA's MPS control
 * daemon. Side effects; returns codes and says why in the caller's buffer, never prints.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_MPS_H
#define NVT_MPS_H

#include <stddef.h>
#include <sys/types.h>

struct nvt_mps {
	char pipe_dir[256]; /* where the daemon listens (see nvt_mps_setup) */
	char log_dir[256];  /* where it logs */
	char control[512];  /* path of nvidia-cuda-mps-control, "" if not found */
	uid_t dir_uid;      /* owner of pipe_dir: the daemon's user */
	int named;          /* the caller named the directories ($CUDA_MPS_PIPE_DIRECTORY or
			     * $CUDA_MPS_LOG_DIRECTORY set): not the defaults */
	uid_t squatter;     /* a refusal's: the other user (neither root nor the caller) whose
			     * entry stands at the directory refused; 0: none */
	int pipe_named;     /* $CUDA_MPS_PIPE_DIRECTORY set: pipe_dir is not the default */
	uid_t aside_uid;    /* nvt_mps_setup_taking's: the user whose entry it renamed aside */
	int per_user;       /* pipe_dir is the caller's own, not the system's */
	int started;        /* nvt_mps_start started it (0: it found one, started meanwhile) */
	int clean_env;      /* run control with no environment but a fixed PATH and the
			     * two directories (the Slurm plugin, as root), not the caller's */
	/* A priority level's daemon (nvt_mps_setup_level): its server loads the shim,
	 * told the level by NVT_ENV_MPS_SERVER; "": a plain daemon. */
	char level[16];
	char server_env[160];
	char shim[512];
};

/*
 * Chooses the daemon's directories and looks for the control binary.
 * $CUDA_MPS_PIPE_DIRECTORY and $CUDA_MPS_LOG_DIRECTORY win. Otherwise root
 * uses the system's /tmp/nvidia-mps and /var/log/nvidia-mps; another user
 * uses the system's when a daemon of root's runs there, else directories of
 * her own ($XDG_RUNTIME_DIR/nvidia-mps and nvidia-mps-log, else
 * /tmp/nvidia-mps-UID and /tmp/nvidia-mps-log-UID): a user's daemon on the
 * system's directory would make every user's CUDA programs its clients.
 * The pipe directory, if it exists, must be a directory of root's or the
 * caller's that nobody else may write in (or sticky); so must the log
 * directory (not sticky). Returns 0, or -1 with the reason in why (and
 * mps->squatter: see nvt_mps_squatted_default).
 */
int nvt_mps_setup(struct nvt_mps *mps, char *why, size_t len);

/*
 * The daemon of a priority level (docs/priorities.md, "Preemption"): tasks
 * time-sliced at that level share its server, whose channel groups the shim
 * (shim, its path), preloaded into the daemon and told server_env (the
 * level's NVT_ENV_PRIORITY text) as NVT_ENV_MPS_SERVER, gives the level's
 * timeslice. Its directories are the plain daemon's with "-LEVEL" after them
 * ($CUDA_MPS_PIPE_DIRECTORY-LEVEL and $CUDA_MPS_LOG_DIRECTORY-LEVEL where
 * those are set; root: /tmp/nvidia-mps-LEVEL and /var/log/nvidia-mps-LEVEL;
 * another user: her own, never the system's, also beside a daemon of root's
 * there). Returns 0, or -1 with the reason in why.
 */
int nvt_mps_setup_level(struct nvt_mps *mps, const char *level, const char *server_env,
			const char *shim, char *why, size_t len);

/*
 * Whether the refusal of nvt_mps_setup, nvt_mps_setup_level or nvt_mps_start
 * is of default directories (the caller named neither) that another user made
 * first (mps->squatter: in the sticky /tmp only she and root may remove them): a
 * task's start then runs its task without MPS, with the refusal as a warning,
 * rather than fail until root removes them (docs/security.md, "Not
 * guaranteed"). A directory the caller named, or one of hers that is amiss,
 * stays refused, and so does a start of the daemon itself (--mps start).
 */
int nvt_mps_squatted_default(const struct nvt_mps *mps);

/*
 * nvt_mps_setup (level NULL) or nvt_mps_setup_level, for a daemon to be started or joined: where
 * root's default pipe directory in /tmp (the caller named none) is another user's entry, made
 * first, with no daemon of hers running there, it is renamed aside (nvt_rename_aside; only root
 * may, /tmp being sticky) and the set-up made again: its new path into aside (len), "" if
 * nothing was. A user's own default directories another user made stay refused
 * (nvt_mps_squatted_default), and so does a daemon of hers: her clients find it there. Returns
 * as the set-up does.
 */
int nvt_mps_setup_taking(struct nvt_mps *mps, const char *level, const char *server_env,
			 const char *shim, char *aside, size_t aside_len, char *why, size_t len);

/* Returns the PID of the running control daemon of mps->pipe_dir, or 0. */
pid_t nvt_mps_daemon(const struct nvt_mps *mps);

/*
 * How long nvtaskset waits for the MPS control daemon, in milliseconds: to
 * start it or stop it (nvt_mps_start, nvt_mps_stop, the Slurm plugin's
 * nvt_node_mps_start) and to answer (nvt_mps_clients). The one value the
 * command and the Slurm plugin use (docs/security.md: "10 s for the MPS
 * daemon"); the driver's is NVT_DRIVER_TIMEOUT_S (gpu/gpus.h).
 */
#define NVT_MPS_TIMEOUT_MS 10000

/*
 * Starts the daemon and waits (at most timeout_ms in all) until it is up.
 * Starts are serialised by a lock file in the pipe directory that only its
 * owner and root may open: of two starts at once, one starts the daemon
 * (mps->started = 1) and the other uses it (mps->started = 0). The log
 * directory is checked like the pipe directory, also after it is made. A
 * caller other than root starts none on a pipe directory of root's (the
 * reason says what she may do instead). Returns 0, or -1 with the reason in why.
 */
int nvt_mps_start(struct nvt_mps *mps, int timeout_ms, char *why, size_t len);

/* Whether the caller may stop the daemon: its user and root may, another user is refused
 * (she would wait in vain), the reason naming its user. Returns 0 (also when none runs), or -1
 * with the reason in why. */
int nvt_mps_may_stop(const struct nvt_mps *mps, char *why, size_t len);

/*
 * Asks the daemon to quit and waits (at most timeout_ms in all, plus grace_s) until it has; a
 * daemon the caller may not stop (nvt_mps_may_stop) is refused at once. NVIDIA's daemon, told
 * "quit", takes no new client and waits for its clients to end (so with clients it outlasts
 * timeout_ms, and this fails); grace_s >= 0 sends "quit -t grace_s": after grace_s seconds it
 * stops its servers all the same, and their clients' CUDA calls fail from then on (< 0: plain
 * "quit"). Returns 0, or -1 with the reason in why.
 */
int nvt_mps_stop(struct nvt_mps *mps, int grace_s, int timeout_ms, char *why, size_t len);

/* The grace --mps stop --force gives a daemon's clients before their servers stop (seconds). */
#define NVT_MPS_QUIT_GRACE_S 2

struct nvt_mps_client;
/*
 * The clients the daemon's servers serve, every user's, as its "ps" lists them, into out (at
 * most max). Waits at most timeout_ms. Returns how many it lists (more than max: the first max
 * stored), or -1 if the daemon did not answer or answered no such list.
 */
int nvt_mps_client_list(struct nvt_mps *mps, struct nvt_mps_client *out, int max, int timeout_ms);

/*
 * Sends one command (e.g. "get_server_list") to the daemon and stores its
 * answer in out. Waits at most timeout_ms. Returns 0 or -1.
 */
int nvt_mps_query(struct nvt_mps *mps, const char *command, char *out, size_t len, int timeout_ms);

/*
 * Finds the MPS server that a task of user uid would join and counts its
 * clients. Returns 0 with *server = 0 if it has no clients (or none runs),
 * 0 with *server and *clients filled, or -1 if the daemon did not answer.
 */
int nvt_mps_clients(struct nvt_mps *mps, uid_t uid, pid_t *server, int *clients, int timeout_ms);

/* Reads the tail of the server log into buf. Returns 0 or -1. */
int nvt_mps_read_log(const struct nvt_mps *mps, char *buf, size_t len);

#endif /* NVT_MPS_H */
