import SkirmishRun

extension RunConsole {
    /// Results on stdout, flushed per line; notes on stderr.
    static var terminal: RunConsole {
        RunConsole(line: { Console.line($0) }, note: { Console.note($0) })
    }
}
