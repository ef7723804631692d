import ArgumentParser
import SkirmishServer

extension Skirmish {
    /// Runs the command line, with one exit status for every kind of bad input.
    ///
    /// argument-parser exits with 64 when it refuses the command line (an unknown flag, a value that does not parse,
    /// a failed validation); every Skirmish command reports its own bad input (a broken script, an unreachable
    /// target) with 2, so a script wrapping `skirmish` sees 2 for both. The message and usage are printed as
    /// argument-parser prints them. A listener that cannot open (a port already taken) is reported the same way.
    static func main() async {
        do {
            var command = try parseAsRoot()
            ((command as? any LoggingCommand)?.logs ?? LogOptions.quiet).bootstrap()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            Console.finish()
        } catch let error as ListenError {
            // A port someone else holds is bad input too: the message names the listener and the flag to change.
            Console.error("Error: \(error)\n")
            exit(afterLogs: ExitCode(2))
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(afterLogs: error) }
            let message = fullMessage(for: error)
            if !message.isEmpty { Console.error(message + "\n") }
            exit(afterLogs: ExitCode(2))
        }
    }

    /// Exits as `exit(withError:)` does, once stderr has taken what is queued for it (at most two seconds).
    static func exit(afterLogs error: any Error) -> Never {
        Console.finish()
        exit(withError: error)
    }
}
