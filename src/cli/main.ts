import { auditCommand, auditHelp } from "./audit-command.js";
import { doctorCommand, doctorHelp } from "./doctor.js";
import type { Io } from "./io.js";

export const help = `Usage: dispatch-hook <command> [options]

Commands:
  audit [--json] -- <node args…>   run a program under the loader and print its audit
  doctor                           check the configuration of the project in this directory

Run "dispatch-hook <command> --help" for a command's options.
`;

/** Runs the command line; resolves to the exit code. */
export async function main(args: readonly string[], io: Io): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    io.out(command === "help" && rest[0] === "audit" ? auditHelp : command === "help" && rest[0] === "doctor" ? doctorHelp : help);
    return command === undefined ? 2 : 0;
  }
  if (command === "audit") return auditCommand(rest, io);
  if (command === "doctor") return doctorCommand(rest, io);
  io.err(`dispatch-hook: unknown command ${JSON.stringify(command)}\n\n${help}`);
  return 2;
}
