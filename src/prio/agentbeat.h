/*
 * agentbeat.h - an agent's heartbeat (agentbeat.c), the part of the agent
 * that the shim links: the agent touches its pid file, and a task whose agent
 * lent it TPCs asks whether one did lately.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NVT_AGENTBEAT_H
#define NVT_AGENTBEAT_H

#include <sys/types.h>

/* An agent touches its pid file this often; a task that borrows TPCs gives them back
 * itself (its shim) once no agent that may manage it (root's, its user's) touched one
 * within NVT_AGENT_LEASE_MS: a killed agent lends nothing for good. */
#define NVT_AGENT_HEARTBEAT_MS 500
#define NVT_AGENT_LEASE_MS 3000
#define NVT_AGENT_PID_NAME "agent.pid" /* mode 0644: "PID START_TIME\n" of the agent */

/* Touches the caller's pid file: the agent's heartbeat. */
void nvt_agent_heartbeat(const char *base);
/*
 * Whether user uid's agent touched its pid file (a file of uid's, never through
 * a link) within max_ms. Returns 1 or 0.
 */
int nvt_agent_fresh(const char *base, uid_t uid, int max_ms);

#endif /* NVT_AGENTBEAT_H */
