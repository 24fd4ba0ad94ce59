import { auditCommand, auditHelp } from "./audit-command.js";
import { doctorCommand, doctorHelp } from "./doctor.js";
import type { Io } from "./io.js";

export const help = `Usage: dispatch-hook <command> [options]

Commands:
  audit [options] -- <command…>    run a command with the loader in every Node process it starts,
                                   then print one audit over all of them
  doctor [--load] [path]           check the configuration of the project (--load: a pre-flight
                                   that loads each backend under the loader in a child process)

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
