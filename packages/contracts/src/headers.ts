/**
 * ListAttempts' response header (its comment in attempt_log.proto): the newest attempt id when it
 * answered, a cursor for WatchAttempts' after_attempt_id. The api sets it and clients read it.
 */
export const NEWEST_ATTEMPT_ID_HEADER = "hookline-newest-attempt-id";
