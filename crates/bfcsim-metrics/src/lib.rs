//! What a bfcsim run measures, and the files it writes.
//!
//! - [`ideal`]: the ideal FCT a flow's FCT is normalized by (BFC §6.2.1: "FCT normalized to the best possible
//!   FCT at link rate"): bfcsim's exact idle-network FCT, BFC's artifact formula (`calculate_fct_slowdown.py`)
//!   or HPCC's `standalone_fct`.
//! - [`record`]: one [`FlowRecord`] per flow, with its FCT and raw slowdown.
//! - [`buckets`] and [`summary`]: slowdown statistics per flow-size bucket (BFC's packet-count buckets, HPCC's
//!   equal-count groups from `analysis/fct_analysis.py`, or user edges), overall and for incast flows.
//! - [`compare`]: two HPCC `fct.txt` files of the same flows (e.g. HPCC's ns-3 and a replay) side by side per
//!   size bucket, for cross-validation.
//! - [`throughput`]: long-lived flows' throughput over the measurement window (BFC §2.1, Table 1).
//! - [`occupancy`], [`drops`], [`utilization`]: switch buffer occupancy histograms, drops by reason and link
//!   utilization per link set.
//! - [`hop`] and [`budget`]: what per-hop flow control did (pauses, paused time per link and per queue, active
//!   flows) and the Tofino2 hardware budget BFC would need.
//! - [`timeseries`]: values sampled over time (queues, buffers, links, flows), `trace.parquet` and `trace.csv`.
//! - [`output`]: `fct.csv`, HPCC's `fct.txt`, `summary.json` (all written atomically) and the console table;
//!   `parquet` (feature `parquet`): `fct.parquet`, the per-flow records compressed.
//!
//! Times stay integer picoseconds throughout; floats appear only in reported statistics. The same records give
//! byte-identical files.

pub mod buckets;
pub mod budget;
pub mod collective;
pub mod compare;
pub mod drops;
pub mod fabric_events;
pub mod hop;
pub mod ideal;
pub mod occupancy;
pub mod output;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod record;
pub mod summary;
pub mod throughput;
pub mod timeseries;
pub mod utilization;

pub use buckets::BucketScheme;
pub use budget::{BudgetConfig, BudgetReport, PeakRate, SwitchBudget, SwitchUsage};
pub use collective::{CollectiveInfo, CollectiveReport, StepOf};
pub use drops::DropCounts;
pub use fabric_events::FabricEventReport;
pub use hop::{
    ActiveFlowsReport, DelayReport, FlowControlReport, NodePausedReport, QueuePausedReport,
};
pub use ideal::{Hop, Ideal, PacketFormat, PathProfile};
pub use occupancy::{
    BufferOccupancy, OccupancyHistogram, OccupancyReport, OccupancyStats, SwitchOccupancy,
};
pub use output::{
    render_table, write_atomic, write_fct_csv, write_hpcc_fct, write_hpcc_pfc, write_summary_json,
};
pub use record::FlowRecord;
pub use summary::{BucketRow, SlowdownStats, Summary, SummaryConfig};
pub use throughput::LongFlowReport;
pub use timeseries::{TimeSeries, TraceLine};
pub use utilization::{LinkSetStats, LinkUsage, LinkUtilization};
