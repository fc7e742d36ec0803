//! BERT sequence classification: candle's encoder, and the pooler and classifier head that
//! candle lacks (Hugging Face's `BertForSequenceClassification`: the first token's final hidden
//! state through `bert.pooler.dense` and tanh, then `classifier`).

use super::{config_as, mismatch};
use crate::score::ScoreError;
use candle_core::{Module, Tensor};
use candle_nn::{linear, Linear, VarBuilder};
use candle_transformers::models::bert::{BertModel, Config};
use serde_json::Value;
use std::path::Path;

/// A BERT encoder with its pooler and classification head.
pub(super) struct Classifier {
    bert: BertModel,
    pooler: Linear,
    classifier: Linear,
}

impl Classifier {
    pub(super) fn load(
        dir: &Path,
        config: &Value,
        vb: VarBuilder,
    ) -> Result<Classifier, ScoreError> {
        let c: Config = config_as(dir, config, "BERT")?;
        let labels = config
            .get("id2label")
            .and_then(Value::as_object)
            .map_or(0, |m| m.len());
        let weights = mismatch(dir);
        let bert = BertModel::load(vb.clone(), &c).map_err(&weights)?;
        let h = c.hidden_size;
        let pooler = linear(h, h, vb.pp("bert.pooler.dense")).map_err(&weights)?;
        let classifier = linear(h, labels, vb.pp("classifier")).map_err(&weights)?;
        Ok(Classifier {
            bert,
            pooler,
            classifier,
        })
    }

    /// Logits, one row per pair.
    pub(super) fn forward(
        &self,
        ids: &Tensor,
        types: &Tensor,
        mask: &Tensor,
    ) -> candle_core::Result<Tensor> {
        let hidden = self.bert.forward(ids, types, Some(mask))?;
        let first = hidden.narrow(1, 0, 1)?.squeeze(1)?;
        let pooled = self.pooler.forward(&first)?.tanh()?;
        self.classifier.forward(&pooled)
    }
}
