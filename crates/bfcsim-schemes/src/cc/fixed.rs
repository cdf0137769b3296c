//! No end-to-end congestion control: a window that never changes. Without a window the NIC sends at line rate
//! without limit (BFC's NICs, §6.2.1: "no end-to-end congestion control"); a window of one BDP is the NIC
//! in-flight cap of BFC's ideal baselines (§2.3, §6.2.1).

use bfcsim_core::Time;
use serde::{Deserialize, Serialize};

use crate::cc::{AckSignal, CongestionControl, DescribeCc, FlowContext, Needs, WindowSpec};
use crate::fabric::Preset;

/// The parameters of [`Fixed`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedConfig {
    /// In-flight cap; absent for none, `"bdp"` for one bandwidth-delay product, or a size such as `"64KB"`.
    #[serde(default)]
    pub window: Option<WindowSpec>,
}

/// A window that never changes (see the module's doc).
#[derive(Clone, Copy, Debug)]
pub struct Fixed {
    window: u64,
}

impl CongestionControl for Fixed {
    fn window(&self) -> u64 {
        self.window
    }
    fn on_ack(&mut self, _: Time, _: &AckSignal) {}
}

impl DescribeCc for Fixed {
    const NAME: &'static str = "none";
    const SUMMARY: &'static str =
        "no end-to-end congestion control: send at line rate, optionally capped at a fixed window";
    type Config = FixedConfig;
    const PERSISTS: bool = true;

    fn new(cfg: &FixedConfig, ctx: &FlowContext) -> Fixed {
        Fixed {
            window: cfg.window.map_or(u64::MAX, |w| w.resolve(ctx)),
        }
    }

    fn needs(_: &FixedConfig) -> Needs {
        Needs::default()
    }

    fn presets() -> &'static [Preset] {
        &[
            Preset {
                name: "none",
                summary: "no congestion or flow control: every flow at line rate",
                config: "[cc]\nname = \"none\"\n",
            },
            Preset {
                name: "fifo",
                summary: "one FIFO queue per port, unlimited buffers, 1-BDP NIC cap: ideal-fq's FIFO counterpart (BFC §2.3, Fig. 4)",
                config: "[cc]\nname = \"none\"\nwindow = \"bdp\"\n[switch]\nqueues_per_port = 1\nunlimited_buffer = true\n",
            },
        ]
    }
}
