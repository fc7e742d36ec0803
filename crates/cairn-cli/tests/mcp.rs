//! The MCP server driven by a real client: the official Python MCP SDK (`mcp` on PyPI), over
//! stdio and Streamable HTTP, in `tests/mcp/test_mcp.py` (pytest). It needs Python 3 with the
//! packages of `tests/mcp/requirements.txt`: the Python that `$CAIRN_MCP_PYTHON` names (CI
//! installs them into the virtual environment `target/mcp-venv`), else `python3`.

use std::path::Path;
use std::process::Command;

#[test]
fn the_python_mcp_sdk_client_drives_cairn_over_stdio_and_http() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp");
    let python = crate::util::mcp_python();
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(&dir)
        .env("CAIRN_BIN", env!("CARGO_BIN_EXE_cairn"))
        .output()
        .unwrap_or_else(|e| panic!("{python} does not run ({e}); the MCP tests need Python 3.10 or later, named by $CAIRN_MCP_PYTHON"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named") && !stdout.contains("No module named"),
        "the MCP tests need the Python packages of {} in {python}: python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r {}, then CAIRN_MCP_PYTHON=$PWD/target/mcp-venv/bin/python\n{stdout}\n{stderr}",
        dir.join("requirements.txt").display(),
        dir.join("requirements.txt").display()
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    println!("{}", stdout.lines().last().unwrap_or(""));
}
