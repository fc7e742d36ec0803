//! The MCP tools (SPEC.md section 10c): what an agent can ask of its memory, each with a JSON
//! schema and a description written for a model.
//!
//! The write tools speak the JSON Lines contract of SPEC.md section 5 (the same fields, turn
//! references and claim origins) and go through `cairn::ingest::apply_line`, so a tool call
//! and an ingested line are judged alike. A refusal is a result the model reads (`verdict`
//! "refused", each finding with its gate and detail, and what to do); arguments that name
//! nothing (an unknown turn, a role that does not exist) or that do not fit the schema are
//! protocol errors (-32602) naming the argument.

use crate::sampling::Sampling;
use crate::writer::Writer;
use cairn::gate::{pin_of, sweep, unpinned_items, Gatekeeper, JudgeKind};
use cairn::ingest::{apply_line, line_result, turns, LineError};
use cairn::record::Author;
use cairn::score::Lexical;
use cairn::{Ledger, Read};
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::{Peer, RequestContext};
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::Arc;

/// A tool's arguments, read from the call. rmcp's own `Parameters` turns arguments that do not
/// fit the schema into a tool error; cairn answers them, as every bad argument, with a protocol
/// error (-32602) that names the argument (`argument turns[0].text: missing field ...`). The
/// name is what rmcp's tool macro looks for to take the input schema from `T`.
pub struct Parameters<T>(pub T);

impl<T: schemars::JsonSchema> schemars::JsonSchema for Parameters<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

impl<'a, S, T: serde::de::DeserializeOwned> FromContextPart<ToolCallContext<'a, S>>
    for Parameters<T>
{
    fn from_context_part(context: &mut ToolCallContext<'a, S>) -> Result<Self, ErrorData> {
        let arguments = Value::Object(context.arguments.take().unwrap_or_default());
        serde_path_to_error::deserialize(arguments)
            .map(Parameters)
            .map_err(|e| {
                let message = match e.path().to_string().as_str() {
                    "." => format!("arguments: {}", e.inner()),
                    path => format!("argument {path}: {}", e.inner()),
                };
                ErrorData::invalid_params(message, None)
            })
    }
}

/// The largest turn number `record_turns` takes (the library's rule).
pub use cairn::ingest::turns::MAX_TURN;

/// The longest `recall` query taken, in bytes: a query is a few words, and its cost grows
/// with its terms.
pub const MAX_QUERY_BYTES: usize = 64 * 1024;

/// The default budget of `context`, in tokens.
pub const DEFAULT_BUDGET: usize = 4000;

/// Who spoke a turn.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RoleArg {
    /// The person directing the agent.
    User,
    /// The agent itself.
    Assistant,
    /// A tool's output.
    Tool,
    /// The system prompt or runtime.
    System,
}

impl RoleArg {
    /// The role's name, as JSON spells it.
    pub fn name(self) -> &'static str {
        match self {
            RoleArg::User => "user",
            RoleArg::Assistant => "assistant",
            RoleArg::Tool => "tool",
            RoleArg::System => "system",
        }
    }
}

/// The class of a pinned item.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PinClassArg {
    /// Something that must never be done.
    Prohibition,
    /// A numeric commitment: a version, budget, deadline or limit.
    Commitment,
    /// A failed attempt whose reason prevents a retry.
    FailedAttempt,
    /// A named external entity that must not be confused.
    Entity,
    /// A preference or choice the user states.
    Preference,
    /// A rule a system prompt or policy states.
    Policy,
    /// An identifier kept verbatim.
    Identifier,
}

/// The schema of a turn's role: a plain enum of the four roles.
fn role_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "description": "Who spoke: the user, you (assistant), a tool's output, or the system prompt.",
        "enum": ["user", "assistant", "tool", "system"]
    })
}

/// The schema of a pinned item's class: a plain enum of the seven classes.
fn class_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "description": "What kind of constraint it is.",
        "enum": ["prohibition", "commitment", "failed-attempt", "entity", "preference", "policy", "identifier"]
    })
}

/// The schema of a claim's origin: the four known tags listed, any other tag allowed (the
/// gates flag it as `missing-origin`).
fn origin_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "description": "Where the claim comes from: user-said, tool-output, hedged (someone said it with \"I think\", \"maybe\"...) or inferred (you concluded it). Another tag is accepted and flagged.",
        "anyOf": [
            {"enum": ["user-said", "tool-output", "hedged", "inferred"]},
            {"type": "string"}
        ]
    })
}

/// One turn to record.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub struct Turn {
    /// Who spoke.
    #[schemars(schema_with = "role_schema")]
    pub role: RoleArg,
    /// What was said or printed, verbatim.
    pub text: String,
    /// The turn number; left out, the turn after the stream's last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// For a tool's output: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// Arguments of `record_turns`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RecordTurns {
    /// The agent's stream (one conversation or task), such as "support-4411".
    pub stream: String,
    /// The turns, in order.
    pub turns: Vec<Turn>,
    /// A key you choose for this call (a UUID, say), so that retrying it is safe: cairn keeps
    /// the key in the ledger with what the call recorded, and a retry with the same key and
    /// the same turns records nothing again and gets the same answer, even after a restart;
    /// the same key with other turns is refused. Without a key, a retried call whose turns
    /// are unnumbered records them again, under new numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

/// The longest idempotency key taken, in bytes (the library's rule).
pub use cairn::ingest::turns::MAX_KEY_BYTES;

/// One claim of a compaction.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub struct ClaimArg {
    /// The proposition, one fact or rule.
    pub text: String,
    /// Where it comes from: "user-said", "tool-output", "hedged" (someone said it with "I
    /// think", "maybe"...) or "inferred" (the agent concluded it).
    #[schemars(schema_with = "origin_schema")]
    pub origin: String,
    /// What supports it: turn references ("turn:12", "turn:3..turn:5"), "prior:N" (claim N of
    /// the current summary) or record ids.
    pub witnesses: Vec<String>,
    /// Whether the agent may act on it.
    #[serde(default)]
    pub actionable: bool,
}

/// Arguments of `propose_compaction`.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub struct ProposeCompaction {
    /// The stream compacted.
    pub stream: String,
    /// The turns the summary replaces, as turn references ("turn:1..turn:40").
    pub covers: Vec<String>,
    /// The turns it drops from the window (they stay in the ledger), as turn references.
    #[serde(default)]
    pub evicts: Vec<String>,
    /// The summary's claims, each citing its turns. Give these, or `text`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ClaimArg>,
    /// Or the summary as prose: cairn splits it into claims (sentences and list items; headings
    /// and code blocks are not claims), finds each one's witnesses among the covered turns,
    /// infers its origin, and judges them as any claims. A sentence no turn supports is
    /// unanchored and refuses the compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Not for the client to set: who wrote a compaction is the server's policy (a client's
    /// own compaction is self-authored unless the server was started with
    /// `--client-author separate`). Giving it is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The token budget the summary was written under.
    #[serde(default = "default_budget")]
    pub budget: u64,
    /// The summary's own fidelity estimate, 0 to 1, if it made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_score: Option<f64>,
    /// Re-ground, before judging, each claim that cites no turn of `covers` (as the `reground`
    /// tool does): a summary whose every claim rests on its covered turns or was re-grounded
    /// restarts the count of self-authored summaries.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reground: bool,
}

fn default_budget() -> u64 {
    DEFAULT_BUDGET as u64
}

/// Arguments of `check_action`.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub struct CheckAction {
    /// The stream of the agent about to act.
    pub stream: String,
    /// The action, as it would be run ("DROP TABLE users", "pip install libfoo==2.4.0").
    pub text: String,
    /// Whether it cannot be undone.
    pub irreversible: bool,
    /// The claims it relies on: "prior:N" (claim N of the current summary) or record ids.
    #[serde(default)]
    pub relies_on: Vec<String>,
}

/// Arguments of `context`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ContextArgs {
    /// The stream.
    pub stream: String,
    /// The most tokens the answer may use (one per four characters, plus 4 an entry);
    /// 4000 when left out.
    #[serde(default)]
    pub budget: Option<usize>,
}

/// Arguments of `recall`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RecallArgs {
    /// What to look for, in words ("what port is staging on").
    pub query: String,
    /// Search this stream only; every stream when left out.
    #[serde(default)]
    pub stream: Option<String>,
    /// The most hits (10 when left out, 1000 at most).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Arguments of `why`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct WhyArgs {
    /// The claim: its record id (or 8 or more leading hex digits), or "prior:N" with `stream`.
    pub claim: String,
    /// The stream, for "prior:N".
    #[serde(default)]
    pub stream: Option<String>,
}

/// One item to pin.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub struct PinItem {
    /// What kind of constraint it is.
    #[schemars(schema_with = "class_schema")]
    pub class: PinClassArg,
    /// The constraint, verbatim.
    pub text: String,
    /// The turn that states it ("turn:12").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<String>,
}

/// Arguments of `pin`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct PinArgs {
    /// The stream.
    pub stream: String,
    /// The pin's name, unique in the stream ("constraints"); pins are write-once.
    pub name: String,
    /// The items; left out, the decision-relevant items cairn's classifier found in the
    /// stream's turns that no pin covers yet.
    #[serde(default)]
    pub items: Option<Vec<PinItem>>,
    /// With `items` left out: return what would be pinned and write nothing (pins are
    /// write-once, so preview them first).
    #[serde(default)]
    pub dry_run: bool,
}

/// Arguments of `retire`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RetireArgs {
    /// The stream.
    pub stream: String,
    /// The pin that holds the item: its name ("constraints") or record id.
    pub pin: String,
    /// The item's text, as pinned.
    pub item: String,
    /// The user's turn that lifts it ("turn:N"), later than the turn that stated it.
    pub witness: String,
}

/// Arguments of `reground`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RegroundArgs {
    /// The claim: its record id (or 8 or more leading hex digits), or "prior:N" with `stream`.
    pub claim: String,
    /// The stream, for "prior:N".
    #[serde(default)]
    pub stream: Option<String>,
}

/// Arguments of `gates`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct GatesArgs {
    /// One stream; every stream when left out.
    #[serde(default)]
    pub stream: Option<String>,
}

/// What the policy says of a sampling judge.
#[derive(Clone, Copy)]
struct SamplingPolicy {
    /// The most one sampling call may take.
    timeout: std::time::Duration,
}

/// The MCP server: the tools over one ledger.
#[derive(Clone)]
pub struct Memory {
    ledger: Arc<Ledger>,
    writer: Writer,
    /// Who the server's policy says wrote its clients' compactions.
    author: Author,
    /// The bounds of the sampling judge, when the policy's judge is `sampling`.
    judging: Option<SamplingPolicy>,
    tool_router: ToolRouter<Memory>,
}

impl Memory {
    /// Tools over `ledger`, judging with `gate`. Fails only if the writer thread cannot start.
    pub fn new(ledger: Arc<Ledger>, gate: Gatekeeper) -> std::io::Result<Memory> {
        let judging = gate
            .policy
            .judge
            .as_ref()
            .filter(|j| j.kind == JudgeKind::Sampling)
            .map(|j| SamplingPolicy {
                timeout: std::time::Duration::from_millis(j.timeout_ms),
            });
        let writer = Writer::start(ledger.clone(), gate)?;
        Ok(Memory {
            ledger,
            writer,
            judging,
            author: Author::SelfAuthored,
            tool_router: Memory::tool_router(),
        })
    }

    /// Names this server's clients as a separate summariser (seed 001's authorship
    /// separation: a pass with access to the raw turns, not the agent summarising itself), or
    /// not. Without it, every compaction a client proposes is self-authored.
    pub fn with_client_author(mut self, author: Author) -> Memory {
        self.author = author;
        self
    }

    /// What the server waits on before it exits, once it has dropped every `Memory`: the
    /// writer thread's end, after which the ledger is closed (SPEC.md section 10c).
    pub fn closing(&self) -> crate::writer::Closing {
        self.writer.closing()
    }

    /// Runs a read on a blocking thread, over a snapshot taken there.
    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&cairn::Snapshot) -> Result<T, ErrorData> + Send + 'static,
    ) -> Result<T, ErrorData> {
        let ledger = self.ledger.clone();
        tokio::task::spawn_blocking(move || {
            let snap = ledger.snapshot().map_err(internal)?;
            f(&snap)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the read stopped: {e}"), None))?
    }

    /// Appends a summary or an action built from a tool's arguments through the gates, and
    /// answers with its verdict.
    async fn gated(
        &self,
        kind: &'static str,
        what: &'static str,
        args: impl Serialize + Send + 'static,
        sampling: Option<Sampling>,
    ) -> Result<CallToolResult, ErrorData> {
        let v = self
            .write(move |ledger, gate| {
                let mut line = serde_json::to_value(&args)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                line["kind"] = json!(kind);
                // Over sampling, the judge is the calling client's model: a cascade of the
                // built-in scorer then it, for this call.
                let own;
                let gate = match sampling {
                    Some(judge) => {
                        own = Gatekeeper {
                            policy: gate.policy.clone(),
                            scorer: gate.policy.cascade(Box::new(Lexical), Box::new(judge)),
                        };
                        &own
                    }
                    None => gate,
                };
                // With a judge, it is asked outside the write transaction and the call gated
                // again (`Gatekeeper::judged`, SPEC.md section 9.6).
                // A batch for the call's stream only: on a shared ledger, other servers judge
                // other streams meanwhile (SPEC.md section 17).
                let stream = line["stream"].as_str().unwrap_or_default().to_string();
                let r = gate
                    .judged_for(ledger, &[stream.as_str()], |batch| {
                        apply(batch, gate, line.clone(), "").map_err(Failed::Tool)
                    })
                    .map_err(Failed::into_error)?;
                // Standard error is the server's log; standard output is the protocol.
                for why in gate.scorer.failures() {
                    eprintln!("cairn: {why}");
                }
                Ok(in_tool_words(line_result(&r)))
            })
            .await?;
        Ok(answer(verdict_text(what, &v), v))
    }

    /// The calling client's model as this call's judge, when the policy's judge is `sampling`
    /// and the client declared the sampling capability.
    fn sampling(&self, peer: Peer<RoleServer>) -> Option<Sampling> {
        let j = self.judging.as_ref()?;
        Sampling::of(peer, tokio::runtime::Handle::current(), j.timeout)
    }

    /// Runs a write on the writer thread.
    async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Ledger, &Gatekeeper) -> Result<T, ErrorData> + Send + 'static,
    ) -> Result<T, ErrorData> {
        match self.writer.run(f).await {
            Some(r) => r,
            None => Err(ErrorData::internal_error(
                "the ledger's writer has stopped; restart the server",
                None,
            )),
        }
    }
}

/// A gated write's failure: the tool's own error, or the ledger's.
enum Failed {
    Tool(ErrorData),
    Ledger(cairn::Error),
}

impl From<cairn::Error> for Failed {
    fn from(e: cairn::Error) -> Failed {
        Failed::Ledger(e)
    }
}

impl Failed {
    fn into_error(self) -> ErrorData {
        match self {
            Failed::Tool(e) => e,
            Failed::Ledger(e) => internal(e),
        }
    }
}

/// A refusal of `record_turns`: a bad argument is an error the model can mend, the ledger's
/// failure an internal error.
fn refused(r: turns::Refusal) -> ErrorData {
    match r {
        turns::Refusal::Argument { .. } | turns::Refusal::Conflict { .. } => {
            ErrorData::invalid_params(r.to_string(), None)
        }
        turns::Refusal::Ledger(e) => internal(e),
        turns::Refusal::Damaged(message) => ErrorData::internal_error(message, None),
    }
}

/// A library error as a protocol error the client can report.
fn internal(e: cairn::Error) -> ErrorData {
    ErrorData::internal_error(e.to_string(), None)
}

/// A line error as a protocol error naming the argument (`claims[1].witnesses[0]`), or an
/// internal error when the ledger is at fault.
fn line_error(e: LineError, prefix: &str) -> ErrorData {
    if e.integrity {
        return ErrorData::internal_error(e.message, None);
    }
    let message = match e.field {
        Some(f) => format!("argument {prefix}{f}: {}", e.message),
        None if prefix.is_empty() => e.message,
        None => format!("argument {}: {}", prefix.trim_end_matches('.'), e.message),
    };
    ErrorData::invalid_params(message, None)
}

/// Applies one JSON Lines object in `batch`.
fn apply(
    batch: &mut cairn::Batch,
    gate: &Gatekeeper,
    line: Value,
    prefix: &str,
) -> Result<cairn::ingest::LineResult, ErrorData> {
    let bytes =
        serde_json::to_vec(&line).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    match apply_line(batch, gate, 1, &bytes) {
        Ok(Some(r)) => Ok(r),
        Ok(None) => Err(ErrorData::invalid_params("the arguments are empty", None)),
        Err(e) => Err(line_error(e, prefix)),
    }
}

/// A tool's answer, with an argument that parsed but cannot be accepted (an unknown turn, a
/// turn number past the limit, a pin already taken) turned into a tool error the model reads
/// (`isError`), rather than a protocol error: the model can mend its call. Arguments that do
/// not fit the schema stay protocol errors (-32602), raised before the tool runs.
fn mendable(r: Result<CallToolResult, ErrorData>) -> Result<CallToolResult, ErrorData> {
    match r {
        Err(e) if e.code == rmcp::model::ErrorCode::INVALID_PARAMS => {
            Ok(refusal(e.message.to_string()))
        }
        other => other,
    }
}

/// A tool error the model reads (`isError`): arguments that parse but cannot be accepted.
fn refusal(text: String) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(text.clone())]);
    r.structured_content = Some(json!({"error": text}));
    r
}

/// A result with text for the model and the same answer as structured JSON.
fn answer(text: String, value: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(value);
    r
}

/// A verdict as a model reads it: admitted or refused, each finding, each claim's status, and
/// what to do about a refusal.
/// A verdict's advice in the words of this front door: a finding that tells a person at a
/// shell to run `cairn pin --auto STREAM NAME` tells an agent over MCP to call the `pin` tool
/// (issue 37, row 22). The verdict recorded in the ledger keeps its words.
fn in_tool_words(v: Value) -> Value {
    const SAID: [(&str, &str); 3] = [
        (
            "pin them (cairn pin --auto ",
            "pin them (call the pin tool with items left out, for stream ",
        ),
        (
            " NAME) or extend the budget",
            " and a name of your choosing) or extend the budget",
        ),
        (
            "(cairn import DIR links a continued log to it)",
            "(record the earlier log's turns with record_turns first)",
        ),
    ];
    let Ok(mut text) = serde_json::to_string(&v) else {
        return v;
    };
    if !SAID.iter().any(|(cli, _)| text.contains(cli)) {
        return v;
    }
    for (cli, tool) in SAID {
        text = text.replace(cli, tool);
    }
    serde_json::from_str(&text).unwrap_or(v)
}

fn verdict_text(what: &str, v: &Value) -> String {
    let mut out = String::new();
    let verdict = v["verdict"].as_str().unwrap_or("recorded");
    out.push_str(&format!(
        "{what} {}: {verdict}",
        v["rid"].as_str().unwrap_or("")
    ));
    if let Some(detail) = v["detail"].as_str() {
        out.push_str(&format!("\nwhy: {detail}"));
    }
    for f in v["findings"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "\nfinding {}: {}",
            f["gate"].as_str().unwrap_or(""),
            f["detail"].as_str().unwrap_or("")
        ));
    }
    for c in v["claims"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "\nclaim [{}] {}",
            c["status"].as_str().unwrap_or("not judged"),
            c["text"]
                .as_str()
                .unwrap_or(c["rid"].as_str().unwrap_or(""))
        ));
        // A claim derived from prose: why it cites what it cites.
        if let Some(why) = c["why"].as_str() {
            out.push_str(&format!(
                "
  found: {why}"
            ));
        }
    }
    let struck = v["struck"].as_array().map_or(0, Vec::len);
    if struck > 0 && verdict == "admitted" {
        out.push_str(&format!(
            "\n{struck} claim(s) were struck: they stay in the ledger, marked, and are not part of your context. The rest of the compaction stands."
        ));
    }
    let repair = &v["repair"];
    if verdict == "refused" && repair["verdict"] == "admitted" {
        out.push_str(&format!(
            "\nThe compaction was refused, and cairn built and admitted its repair {} instead (the proposal less the claims it could not stand behind, with the decision-relevant items it lost kept word for word). Use this text as your compacted context:\n{}",
            repair["rid"].as_str().unwrap_or(""),
            repair["text"].as_str().unwrap_or("")
        ));
        for c in repair["changes"].as_array().into_iter().flatten() {
            out.push_str(&format!("\n  repair: {}", c.as_str().unwrap_or("")));
        }
    } else if verdict == "refused" {
        out.push_str(match what {
            "action" => "\nDo not run this action. Resolve the findings (verify the claims it relies on, or respect the pinned prohibition) and check again.",
            _ => "\nThe compaction was not applied: your window is unchanged. Fix the claims the findings name (cite the turn that says it, keep the hedge, keep every pinned constraint) and propose again.",
        });
    }
    out
}

#[tool_router]
impl Memory {
    #[tool(
        description = "Record turns of the conversation in cairn, verbatim, as they happen: user messages, your replies, tool outputs. Recorded turns are never changed or lost; compactions cite them as witnesses. Returns each turn's number and record id. Give each call an `idempotency_key` (a UUID) so that a retry after a timeout or a restart records nothing twice: the same key with the same turns gets the first answer back, and the same key with other turns is refused."
    )]
    async fn record_turns(
        &self,
        Parameters(args): Parameters<RecordTurns>,
    ) -> Result<CallToolResult, ErrorData> {
        mendable(
            async {
                let stream = args.stream.clone();
                let (recorded, replayed) = self
                    .write(move |ledger, gate| {
                        let mut batch = ledger.batch_for(&[&args.stream]).map_err(internal)?;
                        let turns: Vec<turns::Turn> = (args.turns.into_iter())
                            .map(|t| turns::Turn {
                                role: t.role.name().to_string(),
                                text: t.text,
                                turn: t.turn,
                                tool: t.tool,
                            })
                            .collect();
                        let (done, replayed) = turns::record_turns(
                            &mut batch,
                            gate,
                            &args.stream,
                            &turns,
                            args.idempotency_key.as_deref(),
                        )
                        .map_err(refused)?;
                        if !replayed {
                            batch.commit().map_err(internal)?;
                        }
                        let out: Vec<Value> = (done.iter())
                            .map(|r| json!({"turn": r.turn, "rid": r.rid.to_hex(), "new": r.new}))
                            .collect();
                        Ok((out, replayed))
                    })
                    .await?;
                let text = format!(
                    "{} {} turn(s) in stream {stream}: {}",
                    if replayed {
                        "already recorded under this idempotency key:"
                    } else {
                        "recorded"
                    },
                    recorded.len(),
                    recorded
                        .iter()
                        .map(|r| format!("turn:{}", r["turn"]))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                Ok(answer(
                    text,
                    json!({"stream": stream, "turns": recorded, "replayed": replayed}),
                ))
            }
            .await,
        )
    }

    #[tool(
        description = "Propose a compaction of your context: a summary whose claims each cite the turns that support them. cairn's gates judge it before it replaces anything, and a refused compaction leaves your window as it was. The rules it must meet: (1) `covers` lists the turns you wrote it from (turn:A..turn:B); each claim cites in `witnesses` turns inside `covers` that say it; a claim citing only turns outside `covers`, or only earlier claims (prior:N), is laundered: unverified, and more than 15% laundered actionable claims refuses the compaction. To carry a fact from the previous compaction, cite its original turn again and include that turn in `covers` (evicted turns stay in the ledger and may be covered again). (2) A claim no cited turn supports is fabricated and is struck (kept in the ledger, marked, not admitted; the rest stands); a claim a cited turn contradicts refuses the compaction; paths, versions, names and codes must appear verbatim in earlier turns. (3) Keep the origin: a guess (\"I think\") stays `hedged`. (4) Every pinned constraint must survive: a claim or a turn left in the window must still say each one; if the stream holds prohibitions, commitments or failed attempts that no pin covers, pin them first (the `pin` tool without items). (5) The compaction replaces the current one (its parent is always the stream's head); the fourth self-authored compaction in a row is flagged too deep and cannot back an irreversible action until its claims are re-grounded (`reground`). Instead of `claims` you may give the summary as prose in `text`: cairn finds each sentence's witnesses among the covered turns and shows, per claim, the witnesses found and why. Returns the verdict, every finding, each claim's status (verified, unverified, fabricated...) and the claims struck; when the compaction is refused, cairn also builds, gates and returns its repair (the nearest compaction it admits), whose text you may use as your context."
    )]
    async fn propose_compaction(
        &self,
        Parameters(mut args): Parameters<ProposeCompaction>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        mendable(async {
        if let Some(given) = &args.author {
            return Ok(refusal(format!(
                "argument author: a client cannot say who wrote its compaction (it gave {given:?}); this server counts every compaction its clients propose as {}, by the policy it was started with (`cairn mcp --client-author`); propose again without `author`",
                self.author.name()
            )));
        }
        args.author = Some(self.author.name().to_string());
        let sampling = self.sampling(ctx.peer);
        self.gated("summary", "compaction", args, sampling).await
    }.await)
    }

    #[tool(
        description = "Check an action before you run it, above all one that cannot be undone. cairn refuses it when it matches a pinned prohibition, or when it is irreversible and relies on a claim that is not verified, is hedged, or was summarised too many times. Returns the verdict and every finding; do not run a refused action."
    )]
    async fn check_action(
        &self,
        Parameters(args): Parameters<CheckAction>,
    ) -> Result<CallToolResult, ErrorData> {
        mendable(async { self.gated("action", "action", args, None).await }.await)
    }

    #[tool(
        description = "Get your memory for the next turn, within a token budget: the pinned constraints first (never dropped), then the current summary's claims marked with their status and origin ([unverified, user-said, hedge-stripped] means a guess, not a fact), then the most recent turns. A stream with nothing recorded gives an empty context.",
        annotations(read_only_hint = true)
    )]
    async fn context(
        &self,
        Parameters(args): Parameters<ContextArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        mendable(
            async {
                let budget = args.budget.unwrap_or(DEFAULT_BUDGET);
                let c = self
                    .read(move |snap| {
                        cairn::memory::context(snap, &args.stream, budget).map_err(internal)
                    })
                    .await?;
                Ok(answer(c.to_text(), c.to_json()))
            }
            .await,
        )
    }

    #[tool(
        description = "Search your memory: the recorded turns and claims that best match a query, best first, each with its standing: a claim's status (verified or not), origin and cited turns; a turn's number, speaker, and whether it was compacted away. Use it to look a fact up before relying on it.",
        annotations(read_only_hint = true)
    )]
    async fn recall(
        &self,
        Parameters(args): Parameters<RecallArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        mendable(async {
        if args.query.len() > MAX_QUERY_BYTES {
            return Err(ErrorData::invalid_params(
                format!(
                    "argument query: it is {} bytes long, past the limit of {MAX_QUERY_BYTES}; search with the words that matter",
                    args.query.len()
                ),
                None,
            ));
        }
        let limit = args.limit.unwrap_or(10);
        let r = self
            .read(move |snap| {
                cairn::memory::recall(snap, &args.query, args.stream.as_deref(), limit)
                    .map_err(internal)
            })
            .await?;
        Ok(answer(r.to_text(), r.to_json()))
    }.await)
    }

    #[tool(
        description = "Explain a claim's provenance: the chain of claims and summaries back to the raw turns that witness it, each step's status, and the gates' findings on the way. Use it when a claim's status is not verified.",
        annotations(read_only_hint = true)
    )]
    async fn why(
        &self,
        Parameters(args): Parameters<WhyArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        mendable(
            async {
                let (text, value) = self
                    .read(move |snap| {
                        let r = cairn::ingest::parse_ref(&args.claim).map_err(|e| {
                            ErrorData::invalid_params(format!("argument claim: {e}"), None)
                        })?;
                        let rids = cairn::ingest::resolve(snap, args.stream.as_deref(), &r)
                            .map_err(|e| {
                                ErrorData::invalid_params(format!("argument claim: {e}"), None)
                            })?;
                        let Some(rid) = rids.first().copied() else {
                            return Err(ErrorData::invalid_params(
                                "argument claim: it names no record",
                                None,
                            ));
                        };
                        if !matches!(
                            snap.get(&rid).map_err(internal)?,
                            Some(cairn::record::Record::Claim(_))
                        ) {
                            return Err(ErrorData::invalid_params(
                                format!("argument claim: {} is not a claim", rid.to_hex()),
                                None,
                            ));
                        }
                        let why = cairn::replay::why(snap, rid).map_err(internal)?;
                        let (mut text, mut js) = (Vec::new(), Vec::new());
                        why.write_text(&mut text)
                            .and_then(|()| why.write_json(&mut js))
                            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                        let value: Value = serde_json::from_slice(&js)
                            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                        Ok((String::from_utf8_lossy(&text).into_owned(), value))
                    })
                    .await?;
                Ok(answer(text, value))
            }
            .await,
        )
    }

    #[tool(
        description = "Pin constraints so that no compaction may drop them: prohibitions, commitments, failed attempts, preferences, policies, identifiers. Give the items verbatim with the turn that states each, or leave items out to pin what cairn's classifier found in the stream's turns that no pin covers yet. Pins are write-once."
    )]
    async fn pin(
        &self,
        Parameters(args): Parameters<PinArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        mendable(async {
        if args.dry_run && args.items.is_some() {
            return Err(ErrorData::invalid_params(
                "argument dry_run: a dry run previews what the classifier would pin; leave `items` out, or drop `dry_run` to pin the items given",
                None,
            ));
        }
        let v = self
            .write(move |ledger, gate| {
                let mut batch = ledger.batch_for(&[&args.stream]).map_err(internal)?;
                let (rid, items) = match args.items {
                    Some(items) => {
                        let line = json!({"kind": "pin", "stream": args.stream, "name": args.name, "items": items});
                        let r = apply(&mut batch, gate, line, "")?;
                        (Some(r.rid), serde_json::to_value(items).unwrap_or_default())
                    }
                    None => {
                        let found = unpinned_items(&batch, &args.stream).map_err(internal)?;
                        if args.dry_run {
                            let list: Vec<Value> = found
                                .iter()
                                .map(|i| json!({"turn": i.turn, "class": i.class.name(), "text": i.text}))
                                .collect();
                            return Ok(json!({"stream": args.stream, "name": args.name, "rid": null, "dry_run": true, "items": list}));
                        }
                        if found.is_empty() {
                            (None, json!([]))
                        } else {
                            let a = batch
                                .append(pin_of(&args.stream, &args.name, &found))
                                .map_err(|e| ErrorData::invalid_params(format!("argument name: {e}"), None))?;
                            let list: Vec<Value> = found
                                .iter()
                                .map(|i| json!({"turn": i.turn, "class": i.class.name(), "text": i.text}))
                                .collect();
                            (Some(a.rid), json!(list))
                        }
                    }
                };
                batch.commit().map_err(internal)?;
                Ok(json!({"stream": args.stream, "name": args.name, "rid": rid.map(|r| r.to_hex()), "items": items}))
            })
            .await?;
        let n = v["items"].as_array().map_or(0, Vec::len);
        let text = match v["rid"].as_str() {
            None if v["dry_run"] == true => format!("dry run: would pin {n} item(s) as {}; nothing was written", v["name"]),
            Some(rid) => format!("pinned {n} item(s) as {} ({rid})", v["name"]),
            None => "nothing to pin: every decision-relevant item found is already pinned".into(),
        };
        Ok(answer(text, v))
    }.await)
    }

    #[tool(
        description = "Retire a pinned item the user has lifted (\"ok, you may drop the orders tables now\", \"the budget is now $600\"): give the stream, the pin, the item's text as pinned, and the user's turn that lifts it. Pins never change; from now on the gates hold compactions and actions only to the items still in force, and context marks the item retired. Refused without a later user turn as witness."
    )]
    async fn retire(
        &self,
        Parameters(args): Parameters<RetireArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        mendable(
            async {
                let v = self
                    .write(move |ledger, gate| {
                        let mut batch = ledger.batch_for(&[&args.stream]).map_err(internal)?;
                        let line = json!({"kind": "retirement", "stream": args.stream, "pin": args.pin, "item": args.item, "witness": args.witness});
                        let r = apply(&mut batch, gate, line, "")?;
                        batch.commit().map_err(internal)?;
                        Ok(json!({"rid": r.rid.to_hex(), "stream": args.stream, "pin": args.pin, "item": args.item, "witness": args.witness}))
                    })
                    .await?;
                let text = format!(
                    "retired {:?} of pin {} ({}): no longer in force",
                    v["item"].as_str().unwrap_or(""),
                    v["pin"].as_str().unwrap_or(""),
                    v["rid"].as_str().unwrap_or("")
                );
                Ok(answer(text, v))
            }
            .await,
        )
    }

    #[tool(
        description = "Re-ground a claim: check it again against the raw turns it rests on (kept in the ledger after eviction). When they still say it, the claim becomes verified and its chain of summaries counts from zero again, so it can back an irreversible action; when they do not, nothing changes and the answer says why. Use it on a claim that a finding calls laundered, too deep or unverified."
    )]
    async fn reground(
        &self,
        Parameters(args): Parameters<RegroundArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        mendable(async {
            let v = self
                .write(move |ledger, gate| {
                    let mut line = json!({"kind": "reground", "claim": args.claim});
                    let mut batch = match &args.stream {
                        Some(stream) => ledger.batch_for(&[stream]),
                        None => ledger.batch(),
                    }
                    .map_err(internal)?;
                    if let Some(stream) = args.stream {
                        line["stream"] = json!(stream);
                    }
                    let r = apply(&mut batch, gate, line, "")?;
                    batch.commit().map_err(internal)?;
                    Ok(line_result(&r))
                })
                .await?;
            let text = match v["detail"].as_str() {
                Some(why) => format!("claim {} not re-grounded: {why}", v["rid"].as_str().unwrap_or("")),
                None => format!(
                    "re-grounded: the raw turns still say it, so the claim is verified again (reground {})",
                    v["rid"].as_str().unwrap_or("")
                ),
            };
            Ok(answer(text, v))
        }
        .await)
    }

    #[tool(
        description = "Run every gate over the whole ledger, or one stream: claims with no raw-turn ancestor, claims summarised more than twice, and the like. An empty list means every gate comes back clean.",
        annotations(read_only_hint = true)
    )]
    async fn gates(
        &self,
        Parameters(args): Parameters<GatesArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        mendable(async {
        let found = self
            .write(move |ledger, gate| {
                let snap = ledger.snapshot().map_err(internal)?;
                let found = sweep(gate, &snap, args.stream.as_deref()).map_err(internal)?;
                Ok(found
                    .iter()
                    .map(|f| json!({"gate": f.gate, "stream": f.stream, "subject": f.subject.to_hex(), "detail": f.detail}))
                    .collect::<Vec<_>>())
            })
            .await?;
        let mut text = format!("{} finding(s)", found.len());
        for f in &found {
            text.push_str(&format!(
                "\n{} [{}]: {}",
                f["gate"].as_str().unwrap_or(""),
                f["stream"].as_str().unwrap_or(""),
                f["detail"].as_str().unwrap_or("")
            ));
        }
        Ok(answer(
            text,
            json!({"findings": found, "count": found.len()}),
        ))
    }.await)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Memory {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "cairn is your provenance-checked memory. Record every turn with record_turns as it happens. \
                 When your context grows long, propose_compaction with claims that cite the turns that say them; \
                 if it is refused, read the findings and propose again. Before an irreversible action, check_action. \
                 Start each turn from context, and look facts up with recall: a claim marked unverified is a guess.",
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads are served while the writer is busy (a compaction being judged, here a job that
    /// waits for the test's word), and the write finishes after.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reads_are_served_while_the_writer_is_busy() {
        let ledger = Arc::new(Ledger::in_memory().unwrap());
        let memory = Memory::new(ledger, Gatekeeper::default()).unwrap();
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let busy = memory.clone();
        let write = tokio::spawn(async move {
            busy.write(move |ledger, _| {
                wait.recv().unwrap();
                let mut b = ledger.batch().map_err(internal)?;
                b.append(cairn::record::Span {
                    stream: "s".into(),
                    turn: 0,
                    role: cairn::record::Role::User,
                    tool: None,
                    text: "written after the read".into(),
                })
                .map_err(internal)?;
                b.commit().map_err(internal)
            })
            .await
        });
        // The writer holds its job; a read still answers, and sees nothing yet.
        let seen = memory
            .read(|snap| cairn::memory::context(snap, "s", 100).map_err(internal))
            .await
            .unwrap();
        assert!(seen.spans.is_empty());
        release.send(()).unwrap();
        write.await.unwrap().unwrap();
        let seen = memory
            .read(|snap| cairn::memory::context(snap, "s", 100).map_err(internal))
            .await
            .unwrap();
        assert_eq!(seen.spans.len(), 1);
    }
}
