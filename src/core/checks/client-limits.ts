/** Client limits (ms): loop lag p99 and schedule lag p99 above these warn; either above the fail limit fails. */
export const CLIENT_LIMITS = { loopLagWarnMs: 20, scheduleLagWarnMs: 10, failMs: 100 } as const;
