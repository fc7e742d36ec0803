//! A judge behind an OpenAI-compatible chat-completions endpoint: the API Ollama, llama.cpp's
//! server, vLLM, LM Studio and the hosted providers serve (SPEC.md section 9.6).
//!
//! Two prompt styles. [`Style::Chat`] asks a general chat model, with a fixed and versioned
//! prompt, for supported, contradicted or not-stated and a verbatim quote from the witness; an
//! answer whose quote is not in the witness is discarded. [`Style::MiniCheck`] asks a grounded
//! fact-checker (Bespoke-MiniCheck, which Ollama serves) with its own template,
//! "Document: ... Claim: ...", one claim sentence at a time, for yes or no.

use super::judge::{quoted, Answer, Judge};
use crate::record::Relation;
use crate::text::sentences;
use std::time::Duration;

/// The version of the chat prompt, recorded in every ruling it gave.
pub const CHAT_PROMPT: &str = "cairn-judge-chat-1";
/// The version of the MiniCheck template, recorded in every ruling it gave.
pub const MINICHECK_PROMPT: &str = "cairn-judge-minicheck-1";

const CHAT_SYSTEM: &str = "You check a claim against witness passages from a conversation. \
Decide whether the passages support the claim, contradict it, or do not state it. Answer with \
one JSON object and nothing else: {\"answer\": \"supported\" or \"contradicted\" or \
\"not-stated\", \"quote\": \"...\"}. For supported or contradicted, the quote is the words of \
the passages that decide it, copied exactly. For not-stated, the quote is empty.";

/// Which prompt the endpoint's model is asked with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A general chat model: supported / contradicted / not-stated, with a verbatim quote.
    Chat,
    /// A grounded fact-checker that answers yes or no to "Document: ... Claim: ...".
    MiniCheck,
}

/// A judge behind an OpenAI-compatible `POST {url}/chat/completions`.
pub struct Endpoint {
    url: String,
    model: String,
    key: Option<String>,
    style: Style,
    agent: ureq::Agent,
    id: String,
}

impl Endpoint {
    /// A judge asking `model` at `url` (the API's base, such as `http://localhost:11434/v1`),
    /// with an optional bearer key, each call bounded by `timeout`.
    pub fn new(
        url: &str,
        model: &str,
        key: Option<String>,
        style: Style,
        timeout: Duration,
    ) -> Endpoint {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build()
            .into();
        let kind = match style {
            Style::Chat => "chat",
            Style::MiniCheck => "minicheck",
        };
        Endpoint {
            url: url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            key,
            style,
            agent,
            id: format!("{kind}:{model}"),
        }
    }

    /// One chat completion: the content of the first choice.
    fn complete(&self, system: Option<&str>, user: &str) -> Result<String, String> {
        let mut messages = Vec::new();
        if let Some(s) = system {
            messages.push(serde_json::json!({"role": "system", "content": s}));
        }
        messages.push(serde_json::json!({"role": "user", "content": user}));
        let body = serde_json::json!({
            "model": self.model,
            "messages": messages,
            "temperature": 0,
        });
        let url = format!("{}/chat/completions", self.url);
        let fail = |why: String| format!("judge {} at {url}: {why}", self.id);
        let mut req = self
            .agent
            .post(&url)
            .header("content-type", "application/json");
        if let Some(k) = &self.key {
            req = req.header("authorization", &format!("Bearer {k}"));
        }
        let mut resp = req
            .send(body.to_string())
            .map_err(|e| fail(format!("the call failed ({e})")))?;
        let status = resp.status();
        let text = resp
            .body_mut()
            .read_to_string()
            .map_err(|e| fail(format!("the answer could not be read ({e})")))?;
        if !status.is_success() {
            let head: String = text.chars().take(200).collect();
            return Err(fail(format!("the endpoint answered HTTP {status}: {head}")));
        }
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| fail(format!("the answer is not JSON ({e})")))?;
        v["choices"][0]["message"]["content"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| fail("the answer has no choices[0].message.content".into()))
    }

    fn chat(&self, claim: &str, witnesses: &[&str]) -> Result<Answer, String> {
        let (system, user) = chat_prompt(claim, witnesses);
        let content = self.complete(Some(system), &user)?;
        chat_answer(&self.id, &content, witnesses)
    }

    fn minicheck(&self, claim: &str, witnesses: &[&str]) -> Result<Answer, String> {
        let document = witnesses.join("\n");
        let mut parts = sentences(claim);
        if parts.is_empty() {
            parts.push(claim);
        }
        for part in parts {
            let content = self.complete(None, &format!("Document: {document}\nClaim: {part}"))?;
            let said = content.trim().to_ascii_lowercase();
            if said.starts_with("no") {
                return Ok(Answer {
                    judge: self.id.clone(),
                    prompt: MINICHECK_PROMPT.into(),
                    answer: Relation::Neutral,
                    quote: String::new(),
                });
            }
            if !said.starts_with("yes") {
                let head: String = content.chars().take(80).collect();
                return Err(format!(
                    "judge {}: it answered {head:?}, not yes or no",
                    self.id
                ));
            }
        }
        Ok(Answer {
            judge: self.id.clone(),
            prompt: MINICHECK_PROMPT.into(),
            answer: Relation::Entails,
            quote: String::new(),
        })
    }
}

impl Judge for Endpoint {
    fn id(&self) -> &str {
        &self.id
    }

    fn judge(&self, claim: &str, witnesses: &[&str]) -> Result<Answer, String> {
        match self.style {
            Style::Chat => self.chat(claim, witnesses),
            Style::MiniCheck => self.minicheck(claim, witnesses),
        }
    }
}

/// The chat prompt of version [`CHAT_PROMPT`]: its system message, and the user message with
/// the passages and the claim. Shared by the endpoint judge and MCP sampling.
pub fn chat_prompt(claim: &str, witnesses: &[&str]) -> (&'static str, String) {
    let mut user = String::from("Passages:\n");
    for w in witnesses {
        user.push_str("<<<\n");
        user.push_str(w);
        user.push_str("\n>>>\n");
    }
    user.push_str("Claim: ");
    user.push_str(claim);
    (CHAT_SYSTEM, user)
}

/// Reads a chat model's reply to [`chat_prompt`] as judge `judge`: the JSON object in it, whose
/// quote must stand in the passages for a supported or contradicted answer to count.
pub fn chat_answer(judge: &str, content: &str, witnesses: &[&str]) -> Result<Answer, String> {
    let fail = |why: &str| format!("judge {judge}: {why}");
    // The object may come wrapped in prose or a code fence.
    let object = match (content.find('{'), content.rfind('}')) {
        (Some(a), Some(b)) if a < b => &content[a..=b],
        _ => return Err(fail("its answer holds no JSON object")),
    };
    let v: serde_json::Value =
        serde_json::from_str(object).map_err(|_| fail("its answer is not a JSON object"))?;
    let answer = match v["answer"].as_str().map(str::to_ascii_lowercase).as_deref() {
        Some("supported") => Relation::Entails,
        Some("contradicted") => Relation::Contradicts,
        Some("not-stated" | "not stated" | "not_stated") => Relation::Neutral,
        _ => {
            return Err(fail(
                "its answer is not supported, contradicted or not-stated",
            ))
        }
    };
    let quote = v["quote"].as_str().unwrap_or("").trim().to_string();
    if answer != Relation::Neutral && !quoted(&quote, witnesses) {
        return Err(fail(
            "it quoted words that are not in the witness, so its answer was discarded",
        ));
    }
    Ok(Answer {
        judge: judge.to_string(),
        prompt: CHAT_PROMPT.into(),
        answer,
        quote,
    })
}
