import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { didYouMean } from "../registry/options.js";
import { auditCommand, auditHelp } from "./audit-command.js";
import { doctorCommand, doctorHelp } from "./doctor.js";
import type { Io } from "./io.js";

export const help = `Usage: dispatch-hook <command> [options]

Commands:
  audit [options] -- <command…>    run a command with the loader in every Node process it starts,
                                   then print one audit over all of them
  doctor [options] [path]          check the configuration of the project (--load: a pre-flight
                                   that loads each backend under the loader in a child process)

Run "dispatch-hook <command> --help" for a command's options, "dispatch-hook --version" for the version.
`;

/** The package's version, from the package.json two folders above this module (dist/bundle/ or dist/cli/). */
function version(): string {
  const file = fileURLToPath(new URL("../../package.json", import.meta.url));
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}

/** Runs the command line; resolves to the exit code. */
export async function main(args: readonly string[], io: Io): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    io.out(command === "help" && rest[0] === "audit" ? auditHelp : command === "help" && rest[0] === "doctor" ? doctorHelp : help);
    return command === undefined ? 2 : 0;
  }
  if (command === "--version" || command === "-v") {
    io.out(`${version()}\n`);
    return 0;
  }
  if (command === "audit") return auditCommand(rest, io);
  if (command === "doctor") return doctorCommand(rest, io);
  io.err(`dispatch-hook: unknown command ${JSON.stringify(command)}${didYouMean(command, ["audit", "doctor"])}\n\n${help}`);
  return 2;
}
