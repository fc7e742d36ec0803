//! JSON-RPC messages as both transports read them: a line or a body is a message for rmcp, or
//! is answered at once with the error it deserves (-32700 for what is not JSON, -32600 for
//! JSON that is no JSON-RPC message MCP knows, with the request's id where it can be read).

use rmcp::model::ClientJsonRpcMessage;
use serde_json::{json, Value};

/// What one line holds.
pub(crate) enum Read {
    /// A JSON-RPC message for rmcp.
    Message(Box<ClientJsonRpcMessage>),
    /// Nothing to answer: a blank line, or a notification that is not understood (a
    /// notification is never answered).
    Skip,
    /// The error line to answer it with.
    Answer(Vec<u8>),
}

pub(crate) fn read(line: &[u8]) -> Read {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Read::Skip;
    }
    let error = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(m) => return Read::Message(Box::new(m)),
        Err(e) => e,
    };
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(v) => v,
        Err(e) => {
            let what = match std::str::from_utf8(line) {
                Err(_) => "the message is not valid UTF-8".to_string(),
                Ok(_) => format!("the message is not JSON ({e})"),
            };
            return Read::Answer(error_line(&Value::Null, -32700, what));
        }
    };
    let id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        Some(_) => Value::Null,
        None if value.get("method").is_some_and(Value::is_string) => return Read::Skip,
        None => Value::Null,
    };
    Read::Answer(error_line(
        &id,
        -32600,
        format!("the message is not a JSON-RPC request, notification or response that MCP knows ({error})"),
    ))
}

/// A JSON-RPC error response as one line.
pub(crate) fn error_line(id: &Value, code: i64, message: String) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &[u8]) -> Value {
        match read(line) {
            Read::Answer(l) => serde_json::from_slice(&l).unwrap(),
            Read::Message(_) => panic!("taken as a message"),
            Read::Skip => panic!("skipped"),
        }
    }

    #[test]
    fn every_bad_message_is_answered_with_the_id_where_it_can_be_read() {
        assert_eq!(answer(b"not json")["error"]["code"], -32700);
        assert_eq!(answer(b"{\"a\": \xff}")["error"]["code"], -32700);
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(answer(deep.as_bytes())["error"]["code"], -32700);
        let wrong = answer(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":3}"#);
        assert_eq!(
            (wrong["id"].clone(), wrong["error"]["code"].clone()),
            (json!(7), json!(-32600))
        );
        // Near misses: a real request passes, a blank line is not answered.
        assert!(matches!(
            read(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Read::Message(_)
        ));
        assert!(matches!(read(b"   "), Read::Skip));
    }
}
