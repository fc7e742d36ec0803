//! Text output: everything cairn prints for a person goes through here, so a control or
//! bidirectional character that a ledger's text or stream name holds reaches the terminal as a
//! visible escape, never as an instruction to it (SPEC.md section 6). `--json` output is printed
//! as it is: JSON already escapes what it must, and a program reads it.

pub use cairn::{visible, visible_line};

/// `println!` for text output: the line with [`visible`] applied.
macro_rules! say {
    () => { println!() };
    ($($arg:tt)*) => { println!("{}", $crate::out::visible(&format!($($arg)*))) };
}

/// `writeln!` for text output to a writer: the line with [`visible`] applied.
macro_rules! sayln {
    ($out:expr, $($arg:tt)*) => {
        writeln!($out, "{}", $crate::out::visible(&format!($($arg)*)))
    };
}

/// `eprintln!` for messages: a sentence that quotes a stream name or a text escapes it too.
macro_rules! warn {
    ($($arg:tt)*) => { eprintln!("{}", $crate::out::visible(&format!($($arg)*))) };
}
