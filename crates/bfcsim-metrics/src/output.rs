//! Output files, each written atomically (see [`write_atomic`]) and byte-for-byte deterministic:
//!
//! - `fct.csv`: one tidy row per flow, by flow id ([`write_fct_csv`]).
//! - `fct.txt`: HPCC's format, one line per finished flow in completion order ([`write_hpcc_fct`]), so HPCC's
//!   `analysis/fct_analysis.py` reads our runs unchanged.
//! - `summary.json`: the [`Summary`], pretty-printed, keys in declaration order ([`write_summary_json`]).
//! - `pfc.txt`: HPCC's PFC trace, one line per PAUSE/RESUME frame received ([`write_hpcc_pfc`]).
//!
//! [`render_table`] renders a summary for the console.

use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use bfcsim_core::{NodeId, Time};

use crate::buckets::short_bytes;
use crate::record::FlowRecord;
use crate::summary::{BucketRow, Summary};

/// Where [`write_atomic`] writes `path` before renaming it: `path.<pid>-<n>.tmp`, a name of this process's and
/// this call's own, so that writers of one file at once (two processes sharing a run store that both write a
/// figure's report, or two threads) never write into each other's temporary file.
fn temporary_path(path: &Path) -> io::Result<PathBuf> {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = path
        .file_name()
        .ok_or_else(|| io::Error::other("output path has no file name"))?
        .to_owned();
    name.push(format!(".{}-{n}.tmp", std::process::id()));
    Ok(path.with_file_name(name))
}

/// The temporary files of [`write_atomic`] left in `dir` (none, unless a writer was killed).
#[cfg(test)]
fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// Writes `path` through `write`: into a temporary file of its own (`path.<pid>-<n>.tmp`) in the same directory,
/// flushed and fsynced, then renamed over `path`, so an interrupted run leaves either the old file or the complete
/// new one, never a truncated one. The temporary file is removed if `write` fails.
pub fn write_atomic(
    path: impl AsRef<Path>,
    write: impl FnOnce(&mut (dyn Write + Send)) -> io::Result<()>,
) -> io::Result<()> {
    let path = path.as_ref();
    let tmp = temporary_path(path)?;
    let result = (|| {
        let mut out = BufWriter::new(File::create(&tmp)?);
        write(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    sync_parent(path);
    Ok(())
}

/// Makes the rename durable where the platform allows; failure only weakens durability, not atomicity.
fn sync_parent(path: &Path) {
    #[cfg(unix)]
    {
        let dir: PathBuf = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// Appends a time in nanoseconds with exactly three decimals (picosecond precision), e.g. `1234.560`.
fn push_ns3(line: &mut String, t: Time) {
    let _ = write!(line, "{}.{:03}", t.ps() / 1000, t.ps() % 1000);
}

/// Appends `num / den` rounded half-up to six decimals, computed in integers: exact and the same on every
/// machine, and much cheaper than formatting a float.
fn push_ratio6(line: &mut String, num: Time, den: Time) {
    let den = den.ps().max(1) as u128;
    let micro = (num.ps() as u128 * 1_000_000 * 2 + den) / (2 * den);
    let _ = write!(line, "{}.{:06}", micro / 1_000_000, micro % 1_000_000);
}

/// Header of `fct.csv`.
pub const FCT_CSV_HEADER: &str =
    "id,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_ns,slowdown,incast,class,group";

/// Writes `fct.csv`: the [`FCT_CSV_HEADER`] row, then one row per flow ordered by id. Times are nanoseconds with
/// three decimals (exact), slowdown the raw value with six decimals; finish, fct and slowdown are empty for
/// unfinished flows; incast is `true`/`false`; group is the name in `groups` of the flow's workload group
/// (`group N` past its end), empty for a flow in none.
pub fn write_fct_csv(
    path: impl AsRef<Path>,
    records: &[FlowRecord],
    groups: &[String],
) -> io::Result<()> {
    let sorted = by_id(records);
    write_atomic(path, |w| {
        writeln!(w, "{FCT_CSV_HEADER}")?;
        let mut line = String::with_capacity(128);
        for r in sorted {
            line.clear();
            let _ = write!(line, "{},{},{},{},", r.id, r.src, r.dst, r.size.0);
            push_ns3(&mut line, r.start);
            line.push(',');
            if let (Some(f), Some(fct)) = (r.finish, r.fct()) {
                push_ns3(&mut line, f);
                line.push(',');
                push_ns3(&mut line, fct);
            } else {
                line.push(',');
            }
            line.push(',');
            push_ns3(&mut line, r.ideal);
            line.push(',');
            if let Some(fct) = r.fct() {
                push_ratio6(&mut line, fct, r.ideal);
            }
            let _ = write!(line, ",{},{},", r.incast, r.class);
            if let Some(g) = r.group {
                match groups.get(g as usize) {
                    Some(name) => line.push_str(name),
                    None => {
                        let _ = write!(line, "group {g}");
                    }
                }
            }
            line.push('\n');
            w.write_all(line.as_bytes())?;
        }
        Ok(())
    })
}

/// The records ordered by flow id, as the per-flow files list them.
pub(crate) fn by_id(records: &[FlowRecord]) -> Vec<&FlowRecord> {
    let mut sorted: Vec<&FlowRecord> = records.iter().collect();
    sorted.sort_by_key(|r| r.id);
    sorted
}

/// HPCC's IP address of a node: `0x0b000001 + (id << 8)` (node ids up to 65535 survive HPCC's
/// `(ip >> 8) & 0xffff`).
pub fn hpcc_ip(node: NodeId) -> u32 {
    0x0b00_0001u32.wrapping_add(node.0.wrapping_shl(8))
}

/// Writes HPCC's `fct.txt`: for each finished flow, in completion order (ties by id),
/// `sip dip sport dport size start_ns fct_ns standalone_ns` as `%08x %08x %u %u %lu %lu %lu %lu`; times are
/// rounded down to nanoseconds. `standalone` gives the last column, usually `|r| r.ideal`, or an
/// [`crate::Ideal::Hpcc`] value for HPCC-comparable slowdowns.
pub fn write_hpcc_fct(
    path: impl AsRef<Path>,
    records: &[FlowRecord],
    standalone: impl Fn(&FlowRecord) -> Time,
) -> io::Result<()> {
    let mut finished: Vec<(Time, &FlowRecord)> = records
        .iter()
        .filter_map(|r| r.finish.map(|f| (f, r)))
        .collect();
    finished.sort_by_key(|&(f, r)| (f, r.id));
    write_atomic(path, |w| {
        let mut line = String::with_capacity(96);
        for (finish, r) in finished {
            line.clear();
            let _ = writeln!(
                line,
                "{:08x} {:08x} {} {} {} {} {} {}",
                hpcc_ip(r.src),
                hpcc_ip(r.dst),
                r.sport,
                r.hpcc_dport(),
                r.size.0,
                r.start.ns(),
                (finish - r.start).ns(),
                standalone(r).ns()
            );
            w.write_all(line.as_bytes())?;
        }
        Ok(())
    })
}

/// Writes HPCC's `pfc.txt`: one line per PFC frame received, in the order given (event order), each rendered by
/// its `Display`: `bfcsim_schemes::fabric::PauseRecord` gives ns-3 `third.cc`'s `get_pfc` line,
/// `time_ns node_id node_type if_index type` (1 pause, 0 resume).
pub fn write_hpcc_pfc<R: std::fmt::Display>(
    path: impl AsRef<Path>,
    records: &[R],
) -> io::Result<()> {
    write_atomic(path, |w| {
        for r in records {
            writeln!(w, "{r}")?;
        }
        Ok(())
    })
}

/// Writes `summary.json`, pretty-printed, with a final newline.
pub fn write_summary_json(path: impl AsRef<Path>, summary: &Summary) -> io::Result<()> {
    write_atomic(path, |w| {
        serde_json::to_writer_pretty(&mut *w, summary)?;
        writeln!(w)
    })
}

/// A console table of `summary`: one row per bucket (flows, unfinished, avg/p50/p95/p99/max slowdown with three
/// decimals), the overall and incast rows, then drops, buffer occupancy and link utilization.
pub fn render_table(summary: &Summary) -> String {
    let mut rows: Vec<(String, &BucketRow)> = summary
        .buckets
        .iter()
        .chain([&summary.overall])
        .chain(summary.incast.as_ref())
        .map(|r| (r.label.clone(), r))
        .collect();
    rows.extend(
        summary
            .groups
            .iter()
            .map(|r| (format!("group {}", r.label), r)),
    );
    let width = rows
        .iter()
        .map(|(label, _)| label.chars().count())
        .max()
        .unwrap_or(0)
        .max("bucket".len());
    let mut out = String::new();
    let header = ["flows", "unfin", "avg", "p50", "p95", "p99", "max"];
    let _ = write!(out, "{:<width$}", "bucket");
    for (i, h) in header.iter().enumerate() {
        let w = if i < 2 { 7 } else { 9 };
        let _ = write!(out, " {h:>w$}");
    }
    out.push('\n');
    let rule = width + 2 * 8 + 5 * 10;
    for (i, (label, r)) in rows.iter().enumerate() {
        if i == summary.buckets.len() {
            let _ = writeln!(out, "{}", "-".repeat(rule));
        }
        let _ = write!(out, "{label:<width$} {:>7} {:>7}", r.flows, r.unfinished);
        match r.slowdown {
            Some(s) => {
                for v in [s.avg, s.p50, s.p95, s.p99, s.max] {
                    let _ = write!(out, " {v:>9.3}");
                }
            }
            None => {
                for _ in 0..5 {
                    let _ = write!(out, " {:>9}", "-");
                }
            }
        }
        out.push('\n');
    }
    let _ = write!(out, "drops: {}", summary.drops.total());
    let reasons: Vec<String> = summary
        .drops
        .iter()
        .map(|(r, c)| format!("{r} {c}"))
        .collect();
    if !reasons.is_empty() {
        let _ = write!(out, " ({})", reasons.join(", "));
    }
    out.push('\n');
    match &summary.occupancy {
        Some(occ) => {
            let a = &occ.all;
            let _ = writeln!(
                out,
                "buffer occupancy, all {} switches: p50 {} p99 {} max {} ({} samples, {} bins)",
                occ.per_switch.len(),
                short_bytes(a.p50_bytes),
                short_bytes(a.p99_bytes),
                short_bytes(a.max_bytes),
                a.samples,
                short_bytes(occ.bin_bytes)
            );
            if let Some(worst) = occ
                .per_switch
                .iter()
                .max_by_key(|s| (s.stats.p99_bytes, s.stats.max_bytes))
            {
                let _ = writeln!(
                    out,
                    "  highest p99: switch {}: p50 {} p99 {} max {}",
                    worst.switch,
                    short_bytes(worst.stats.p50_bytes),
                    short_bytes(worst.stats.p99_bytes),
                    short_bytes(worst.stats.max_bytes)
                );
            }
        }
        None => out.push_str("buffer occupancy: not sampled\n"),
    }
    if summary.links.is_empty() {
        out.push_str("link utilization: not measured\n");
    }
    for set in &summary.links {
        let _ = writeln!(
            out,
            "link utilization {}: mean {:.3} max {:.3} ({} link{})",
            set.name,
            set.mean,
            set.max,
            set.links,
            if set.links == 1 { "" } else { "s" }
        );
    }
    for (label, delay) in [
        ("queuing delay per switch hop", &summary.queuing_delay),
        (
            "  of one-packet flows' packets",
            &summary.single_packet_delay,
        ),
    ] {
        if let Some(d) = delay {
            let _ = writeln!(
                out,
                "{label}: p50 {:.0}ns p99 {:.0}ns p99.9 {:.0}ns max {:.0}ns ({} packet-hops)",
                d.p50_ns, d.p99_ns, d.p999_ns, d.max_ns, d.samples
            );
        }
    }
    for c in &summary.collectives {
        out.push_str(&c.text());
    }
    // An imported topology's lossy links are an event each: the ten first, and the rest in summary.json.
    for e in summary.fabric_events.iter().take(10) {
        out.push_str(&e.text());
    }
    if let Some(more) = summary
        .fabric_events
        .len()
        .checked_sub(10)
        .filter(|&n| n > 0)
    {
        let lost: u64 = summary.fabric_events[10..].iter().map(|e| e.drops).sum();
        let _ = writeln!(
            out,
            "... {more} more fabric events, {lost} packets lost (summary.json's fabric_events)"
        );
    }
    for l in &summary.long_lived {
        let _ = writeln!(
            out,
            "long-lived flow {} -> {}: {:.2} Gb/s, {:.1}% of its link, from {} to {} ns",
            l.src,
            l.dst,
            l.gbps,
            l.share_of_link * 100.0,
            l.window_start_ns,
            l.window_end_ns
        );
    }
    if summary.dropped_data_packets > 0 {
        let _ = writeln!(
            out,
            "packet loss rate: {:.4}% ({} of {} data packets dropped); {:.4}% of packets arriving at a queue \
             ({} of {}, ACKs included)",
            summary.loss_rate() * 100.0,
            summary.dropped_data_packets,
            summary.data_packets,
            summary.queue_loss_rate() * 100.0,
            summary.dropped_packets,
            summary.packet_hops + summary.dropped_packets
        );
        if let Some(mean) = summary.switch_port_loss {
            let _ = writeln!(
                out,
                "  {:.4}% averaged over switch ports (each port's drops over its arrivals: the BCC authors' ns-2 \
                 scripts' figure)",
                mean * 100.0
            );
        }
    }
    if summary.timeouts > 0 || summary.duplicate_data > 0 {
        let _ = writeln!(
            out,
            "retransmission timeouts: {}; data packets delivered twice: {}",
            summary.timeouts, summary.duplicate_data
        );
    }
    if let Some(a) = &summary.active_flows {
        let _ = writeln!(out, "active flows per switch port: {a}");
    }
    let own = summary
        .flow_control
        .as_ref()
        .and_then(|f| f.scheme.as_ref());
    if let Some(r) = own.filter(|r| !r.pauses) {
        let _ = writeln!(out, "{}: {}", r.label, r.text);
    } else if let Some(f) = &summary.flow_control {
        let _ = writeln!(
            out,
            "{}: {} pauses, {} resumes, {} refreshes; links paused mean {:.4} max {:.4}; \
             {} assignments, {} queue collisions, {} index collisions",
            f.kind,
            f.pause_frames,
            f.resume_frames,
            f.refresh_frames,
            f.link_paused_mean,
            f.link_paused_max,
            f.assignments,
            f.queue_collisions,
            f.index_collisions
        );
        if let Some(r) = &f.scheme {
            let _ = writeln!(out, "{}: {}", r.label, r.text);
        }
        if let Some(n) = f.per_node.first() {
            let _ = writeln!(
                out,
                "most paused node: {} {} (links paused mean {:.4} max {:.4}, {} PFC PAUSE frames received; \
                 {} nodes paused in summary.json)",
                n.kind,
                n.node,
                n.paused_mean,
                n.paused_max,
                n.pauses_received,
                f.per_node.len()
            );
        }
        if let Some(q) = &f.queue_paused {
            let _ = writeln!(
                out,
                "queues paused: mean {:.4} p99 {:.4} max {:.4} ({} of {} switch data queues ever paused)",
                q.mean, q.p99, q.max, q.ever_paused, q.queues
            );
        }
        if f.watchdog_alarms > 0 {
            let _ = writeln!(
                out,
                "WATCHDOG: {} queues paused too long; first {}",
                f.watchdog_alarms,
                f.first_alarm.as_deref().unwrap_or("")
            );
        }
    }
    if let Some(h) = &summary.hardware {
        let m = &h.max;
        let _ = writeln!(
            out,
            "Tofino2 budget, max over {} switches: flow table {} entries {}, pause counter {} entries {}; \
             recirculated {}B headers {:.3e}/s ({:.3e}/s peak) = {:.2}% of capacity ({:.2}% peak, budget {:.0}%), \
             {:.2}% of packet rate at peak",
            h.per_switch.len(),
            m.flow_table_entries,
            short_bytes(m.flow_table_bytes),
            m.pause_counter_entries,
            short_bytes(m.pause_counter_bytes),
            h.recirculation_header_bytes,
            m.recirculations_per_sec,
            m.peak_recirculations_per_sec,
            100.0 * m.recirculation_share,
            100.0 * m.peak_recirculation_share,
            100.0 * h.recirculation_budget,
            100.0 * m.peak_pps_share
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drops::DropCounts;
    use crate::occupancy::BufferOccupancy;
    use crate::summary::SummaryConfig;
    use crate::utilization::{LinkUsage, LinkUtilization};
    use bfcsim_core::{Bytes, FlowId, Rate};

    fn scratch_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("bfcsim-metrics-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn records() -> Vec<FlowRecord> {
        let base = FlowRecord {
            id: FlowId(0),
            src: NodeId(0),
            dst: NodeId(1),
            size: Bytes(38_884),
            start: Time::from_ns(2_000_000_000),
            finish: None,
            ideal: Time::from_ns(15_740),
            incast: false,
            class: 3,
            sport: 10000,
            dport: 0,
            group: None,
        };
        vec![
            FlowRecord {
                id: FlowId(2),
                finish: Some(Time(2_000_031_480_500)),
                group: Some(1),
                ..base
            },
            FlowRecord {
                id: FlowId(1),
                group: Some(4),
                src: NodeId(300),
                dst: NodeId(5),
                incast: true,
                sport: 10001,
                ..base
            },
            FlowRecord {
                id: FlowId(0),
                size: Bytes(500),
                start: Time(1_000_000_001),
                finish: Some(Time(1_000_004_241)),
                ideal: Time(4_240_000),
                ..base
            },
        ]
    }

    #[test]
    fn fct_csv_is_exact_and_ordered_by_id() {
        let dir = scratch_dir("csv");
        let path = dir.join("fct.csv");
        write_fct_csv(&path, &records(), &["long".into(), "mice".into()]).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "id,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_ns,slowdown,incast,class,group\n\
             0,0,1,500,1000000.001,1000004.241,4.240,4240.000,0.001000,false,3,\n\
             1,300,5,38884,2000000000.000,,,15740.000,,true,3,group 4\n\
             2,0,1,38884,2000000000.000,2000031480.500,31480.500,15740.000,2.000032,false,3,mice\n"
        );
        assert!(leftovers(&dir).is_empty());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn hpcc_pfc_txt_lines_in_order() {
        let dir = scratch_dir("pfc");
        let path = dir.join("pfc.txt");
        write_hpcc_pfc(&path, &["2000001234 130 1 3 1", "2000005678 130 1 3 0"]).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text, "2000001234 130 1 3 1\n2000005678 130 1 3 0\n");
        assert!(leftovers(&dir).is_empty());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn hpcc_fct_txt_format() {
        let dir = scratch_dir("txt");
        let path = dir.join("fct.txt");
        let mut recs = records();
        recs[1].finish = Some(Time::from_ns(2_000_020_000));
        write_hpcc_fct(&path, &recs, |r| r.ideal).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "0b000001 0b000101 10000 100 500 1000000 4 4240\n\
             0b012c01 0b000501 10001 200 38884 2000000000 20000 15740\n\
             0b000001 0b000101 10000 100 38884 2000000000 31480 15740\n"
        );
        // HPCC's ip_to_node_id recovers the node.
        assert_eq!((hpcc_ip(NodeId(300)) >> 8) & 0xffff, 300);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn write_atomic_keeps_the_old_file_on_failure() {
        let dir = scratch_dir("atomic");
        let path = dir.join("out.txt");
        write_atomic(&path, |w| w.write_all(b"complete\n")).unwrap();
        let err = write_atomic(&path, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("killed"))
        });
        assert!(err.is_err());
        assert_eq!(fs::read_to_string(&path).unwrap(), "complete\n");
        assert!(leftovers(&dir).is_empty());
        fs::remove_dir_all(dir).unwrap();
    }

    fn synthetic_summary() -> Summary {
        let mut recs = Vec::new();
        for i in 0..40u32 {
            let size = [700u64, 1500, 3000, 30_000, 2_000_000][i as usize % 5];
            let ideal = 4_000 + size / 10;
            let fct = ideal + ideal * u64::from(i % 7) / 3 + u64::from(i) * 11;
            recs.push(FlowRecord {
                id: FlowId(i),
                src: NodeId(i % 8),
                dst: NodeId(8 + i % 8),
                size: Bytes(size),
                start: Time::from_ns(1000 * u64::from(i)),
                finish: (i != 17).then(|| Time::from_ns(1000 * u64::from(i) + fct)),
                ideal: Time::from_ns(ideal),
                incast: i % 10 == 9,
                class: 0,
                sport: 10000,
                dport: 0,
                group: None,
            });
        }
        let mut summary = Summary::new(&recs, &SummaryConfig::default(), &[]);
        let mut drops = DropCounts::new();
        drops.add("buffer_full", 12);
        drops.add("ttl_expired", 1);
        summary.drops = drops;
        let mut occ = BufferOccupancy::default();
        for (sw, samples) in [
            (20u32, [0u64, 0, 1_200, 5_000, 64_000]),
            (21, [0, 300, 300, 2_000, 9_000]),
        ] {
            for s in samples {
                occ.add(NodeId(sw), s);
            }
        }
        summary.occupancy = Some(occ.report());
        let mut links = LinkUtilization::new();
        let usage = |bytes| LinkUsage {
            bytes: Bytes(bytes),
            rate: Rate::gbps(100),
            duration: Time::from_us(10),
        };
        links.add("host-tor", usage(50_000));
        links.add("host-tor", usage(110_000));
        links.add("tor-agg", usage(25_000));
        summary.links = links.report();
        summary
    }

    #[test]
    fn console_table() {
        insta::assert_snapshot!(render_table(&synthetic_summary()));
    }

    /// A BFC run's extra lines: per-group rows, the paused fraction of queues and the Tofino2 budget.
    #[test]
    fn console_table_of_a_bfc_run() {
        use crate::budget::{BudgetConfig, SwitchUsage};
        use crate::hop::{FlowControlReport, QueuePausedReport};
        let mut recs = Vec::new();
        for i in 0..12u32 {
            recs.push(FlowRecord {
                id: FlowId(i),
                src: NodeId(16 + i),
                dst: NodeId(i % 2),
                size: Bytes(1000),
                start: Time::from_us(u64::from(i)),
                finish: (i % 4 != 3).then(|| Time::from_us(u64::from(i) + 9 + u64::from(i % 5))),
                ideal: Time::from_us(8),
                incast: false,
                class: 0,
                sport: 10000,
                dport: 0,
                group: Some((i % 2) as u16),
            });
        }
        let mut s = Summary::new(
            &recs,
            &SummaryConfig::default(),
            &["direct".into(), "indirect".into()],
        );
        s.flow_control = Some(FlowControlReport {
            kind: "bfc".into(),
            queue_paused: QueuePausedReport::from_fractions(vec![0.0, 0.0, 0.25, 0.5]),
            ..FlowControlReport::default()
        });
        s.hardware = Some(BudgetConfig::default().report(&[SwitchUsage {
            switch: NodeId(128),
            capacity_bps: 2.4e12,
            queues_per_port: 32,
            flow_table_entries: 76_800,
            pause_counter_entries: 300,
            recirculations_per_sec: 1e8,
            peak_recirculations_per_sec: 2e8,
        }]));
        insta::assert_snapshot!(render_table(&s));
    }

    #[test]
    fn summary_json_is_deterministic() {
        let dir = scratch_dir("json");
        let (a, b) = (dir.join("a.json"), dir.join("b.json"));
        write_summary_json(&a, &synthetic_summary()).unwrap();
        write_summary_json(&b, &synthetic_summary()).unwrap();
        let text = fs::read_to_string(&a).unwrap();
        assert_eq!(text, fs::read_to_string(&b).unwrap());
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["bucket_scheme"], "bfc_google");
        assert_eq!(value["buckets"][0]["label"], "1 pkt (<1KB)");
        assert_eq!(value["drops"]["buffer_full"], 12);
        assert_eq!(value["occupancy"]["per_switch"][0]["switch"], 20);
        fs::remove_dir_all(dir).unwrap();
    }
}
