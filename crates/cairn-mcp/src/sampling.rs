//! The judge that asks the connected client's own model, over MCP sampling
//! (`sampling/createMessage`), where the client offers it (SPEC.md section 9.6).
//!
//! It is built for one tool call, from the caller's peer, and asked on the writer thread with
//! no transaction open ([`Gatekeeper::judged`](cairn::gate::Gatekeeper::judged)); it waits for
//! the client's answer on the server's runtime. The prompt and the reading of the answer are
//! the endpoint judge's chat style: a verbatim quote from the witness or nothing counts.
//!
//! rmcp 3.11 marks sampling deprecated (SEP-2577 proposes to replace server-to-client requests
//! in a later protocol version); clients of the versions it speaks still offer it, and it is
//! the one way to reach the client's own model, so this module allows the deprecation.
#![allow(deprecated)]

use cairn::score::{chat_answer, chat_prompt, Answer, Judge};
use rmcp::model::{CreateMessageRequestParams, SamplingMessage};
use rmcp::service::Peer;
use rmcp::RoleServer;
use std::time::Duration;

/// The most tokens the client's model may answer with: a verdict and a short quote.
const MAX_TOKENS: u32 = 400;

/// The client's model as a judge.
pub struct Sampling {
    peer: Peer<RoleServer>,
    runtime: tokio::runtime::Handle,
    timeout: Duration,
    id: String,
}

impl Sampling {
    /// The judge for a call from `peer`, when the client declared the sampling capability.
    pub fn of(
        peer: Peer<RoleServer>,
        runtime: tokio::runtime::Handle,
        timeout: Duration,
    ) -> Option<Sampling> {
        let info = peer.peer_info()?;
        info.capabilities.sampling.as_ref()?;
        let id = format!("sampling:{}", info.client_info.name);
        Some(Sampling {
            peer,
            runtime,
            timeout,
            id,
        })
    }
}

impl Judge for Sampling {
    fn id(&self) -> &str {
        &self.id
    }

    fn judge(&self, claim: &str, witnesses: &[&str]) -> Result<Answer, String> {
        let (system, user) = chat_prompt(claim, witnesses);
        let params =
            CreateMessageRequestParams::new(vec![SamplingMessage::user_text(user)], MAX_TOKENS)
                .with_system_prompt(system)
                .with_temperature(0.0);
        let call = self.peer.create_message(params);
        let answer = self
            .runtime
            .block_on(async { tokio::time::timeout(self.timeout, call).await })
            .map_err(|_| {
                format!(
                    "judge {}: the client's model did not answer within {} ms",
                    self.id,
                    self.timeout.as_millis()
                )
            })?
            .map_err(|e| {
                format!(
                    "judge {}: the client refused the sampling request ({e})",
                    self.id
                )
            })?;
        let text: String = answer
            .message
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        let mut a = chat_answer(&format!("sampling:{}", answer.model), &text, witnesses)?;
        // The ruling names the model that answered, as the client reported it.
        a.judge = format!("sampling:{}", answer.model);
        Ok(a)
    }
}
