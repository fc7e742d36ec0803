//! DeBERTa-v2/v3 sequence classification with candle's model. candle leaves the v2 convolution
//! layer (`conv_kernel_size` > 0, in DeBERTa-v2 xlarge and xxlarge) unwritten and panics on
//! it, so such a config is refused here, before loading; DeBERTa-v3 models have no such layer.

use super::{config_as, load_err, mismatch};
use crate::score::ScoreError;
use candle_core::{DType, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::debertav2::{Config, DebertaV2SeqClassificationModel};
use serde_json::Value;
use std::path::Path;

/// A DeBERTa-v2/v3 encoder with its context pooler and classification head.
pub(super) struct Classifier {
    model: DebertaV2SeqClassificationModel,
    /// Whether the model embeds token types (`type_vocab_size` > 0; v3 models do not).
    typed: bool,
}

impl Classifier {
    pub(super) fn load(
        dir: &Path,
        config: &Value,
        vb: VarBuilder,
    ) -> Result<Classifier, ScoreError> {
        let c: Config = config_as(dir, config, "DeBERTa-v2")?;
        if let Some(k) = c.conv_kernel_size.filter(|k| *k > 0) {
            return Err(load_err(
                dir,
                format!("its encoder has the DeBERTa-v2 convolution layer (conv_kernel_size {k}), which cairn does not run; use a DeBERTa-v3 model or a v2 model without it"),
            ));
        }
        if c.pooler_hidden_size.is_none()
            || c.pooler_dropout.is_none()
            || c.pooler_hidden_act.is_none()
        {
            return Err(load_err(
                dir,
                "config.json lacks pooler_hidden_size, pooler_dropout or pooler_hidden_act, which a DeBERTa sequence classifier has",
            ));
        }
        let model = DebertaV2SeqClassificationModel::load(vb.pp("deberta"), &c, None)
            .map_err(mismatch(dir))?;
        Ok(Classifier {
            model,
            typed: c.type_vocab_size > 0,
        })
    }

    /// Logits, one row per pair.
    pub(super) fn forward(
        &self,
        ids: &Tensor,
        types: &Tensor,
        mask: &Tensor,
    ) -> candle_core::Result<Tensor> {
        let types = self.typed.then(|| types.clone());
        self.model
            .forward(ids, types, Some(mask.to_dtype(DType::I64)?))
    }
}
