import type { EmitResult, NewEvent } from "@hookline/store";

/**
 * TEST-ONLY (HOOKLINE_FAULT_EXIT_AFTER_COMMIT): wraps Emit's commit so the process exits with 137
 * right after the Nth commit, before the queue add: the window the sweeper heals. The composition
 * root builds it only when the variable is set; the Emit handler knows nothing of it.
 */
export function exitAfterCommits(
  commit: (event: NewEvent) => Promise<EmitResult>,
  exitAfter: number,
  exit: (code: number) => never = process.exit,
): (event: NewEvent) => Promise<EmitResult> {
  let commits = 0;
  return async (event) => {
    const result = await commit(event);
    if (++commits >= exitAfter) exit(137);
    return result;
  };
}
