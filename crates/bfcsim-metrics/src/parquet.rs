//! `fct.parquet`: the per-flow records of `fct.csv` as one Parquet file compressed with zstd, a fifth or less of
//! the size of `fct.csv` and `fct.txt` together, read directly by pandas (`pd.read_parquet`), polars and
//! DuckDB; and `trace.parquet`, a run's time series ([`crate::timeseries`]) in the same way.
//!
//! One row per flow, ordered by id, with the columns of `fct.csv`; times are exact integer picoseconds
//! (`start_ps`, ...; `fct.csv` writes the same values as nanoseconds with three decimals), and `slowdown` is the
//! raw `fct_ps / ideal_ps` (`fct.csv` rounds it to six decimals). `finish_ps`, `fct_ps` and `slowdown` are
//! null for a flow unfinished when the run ended, `group` for a flow in no workload group.
//!
//! The writer is the `parquet` crate's column API, without Arrow: the records are already columns of
//! integers, and Arrow would more than double the build.

use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use bfcsim_core::Time;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::data_type::{
    BoolType, ByteArray, ByteArrayType, DataType, DoubleType, Int32Type, Int64Type,
};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;

use crate::output::{by_id, write_atomic};
use crate::record::FlowRecord;
use crate::timeseries::TimeSeries;

/// The file's schema, in Parquet's message syntax. Unsigned logical types tell readers the ranges.
pub const FCT_PARQUET_SCHEMA: &str = "
message flow {
    REQUIRED INT64 id (INTEGER(64, false));
    REQUIRED INT32 src (INTEGER(32, false));
    REQUIRED INT32 dst (INTEGER(32, false));
    REQUIRED INT64 size_bytes (INTEGER(64, false));
    REQUIRED INT64 start_ps (INTEGER(64, false));
    OPTIONAL INT64 finish_ps (INTEGER(64, false));
    OPTIONAL INT64 fct_ps (INTEGER(64, false));
    REQUIRED INT64 ideal_ps (INTEGER(64, false));
    OPTIONAL DOUBLE slowdown;
    REQUIRED BOOLEAN incast;
    REQUIRED INT32 class (INTEGER(8, false));
    OPTIONAL BYTE_ARRAY group (STRING);
}
";

/// Rows per row group: readers can skip or parallelise over groups, and the writer holds one group's columns.
const ROW_GROUP: usize = 1 << 20;

/// Writes `fct.parquet` (see the module documentation) atomically; `groups` names the workload groups by index
/// (`group N` past its end), as for `fct.csv`.
pub fn write_fct_parquet(
    path: impl AsRef<Path>,
    records: &[FlowRecord],
    groups: &[String],
) -> io::Result<()> {
    let sorted = by_id(records);
    write_atomic(path, |w| {
        write_rows(w, &sorted, groups).map_err(io::Error::other)
    })
}

/// Encodings for the flow table: dictionaries for the columns with few distinct values (hosts, sizes drawn from
/// a CDF, their ideal FCTs, group names), deltas for the times (ids and start times grow with the id), and the
/// bytes of the doubles split into streams, which zstd then compresses a little better. Zstd at its fastest
/// level: higher levels make files barely smaller and runs slower, clearing their larger tables for every page
/// they compress (docs/BENCHMARKS-HISTORY.md has the measurement).
fn properties() -> parquet::errors::Result<WriterProperties> {
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
        .set_max_row_group_size(ROW_GROUP)
        .set_dictionary_enabled(false);
    for column in ["src", "dst", "size_bytes", "ideal_ps", "group"] {
        builder = builder.set_column_dictionary_enabled(ColumnPath::from(column), true);
    }
    for column in ["id", "start_ps", "finish_ps", "fct_ps"] {
        builder =
            builder.set_column_encoding(ColumnPath::from(column), Encoding::DELTA_BINARY_PACKED);
    }
    builder =
        builder.set_column_encoding(ColumnPath::from("slowdown"), Encoding::BYTE_STREAM_SPLIT);
    Ok(builder.build())
}

fn write_rows(
    w: &mut (dyn Write + Send),
    rows: &[&FlowRecord],
    groups: &[String],
) -> parquet::errors::Result<()> {
    let schema = Arc::new(parse_message_type(FCT_PARQUET_SCHEMA)?);
    let mut file = SerializedFileWriter::new(w, schema, Arc::new(properties()?))?;
    let ps = |t: Time| t.ps() as i64;
    let group_name = |g: u16| {
        let name = groups
            .get(g as usize)
            .cloned()
            .unwrap_or_else(|| format!("group {g}"));
        ByteArray::from(name.into_bytes())
    };
    for chunk in rows.chunks(ROW_GROUP) {
        let mut g = file.next_row_group()?;
        let rows = chunk.iter();
        required::<Int64Type, _>(&mut g, rows.clone().map(|r| r.id.0 as i64))?;
        required::<Int32Type, _>(&mut g, rows.clone().map(|r| r.src.0 as i32))?;
        required::<Int32Type, _>(&mut g, rows.clone().map(|r| r.dst.0 as i32))?;
        required::<Int64Type, _>(&mut g, rows.clone().map(|r| r.size.0 as i64))?;
        required::<Int64Type, _>(&mut g, rows.clone().map(|r| ps(r.start)))?;
        optional::<Int64Type, _>(&mut g, rows.clone().map(|r| r.finish.map(ps)))?;
        optional::<Int64Type, _>(&mut g, rows.clone().map(|r| r.fct().map(ps)))?;
        required::<Int64Type, _>(&mut g, rows.clone().map(|r| ps(r.ideal)))?;
        optional::<DoubleType, _>(&mut g, rows.clone().map(|r| r.slowdown()))?;
        required::<BoolType, _>(&mut g, rows.clone().map(|r| r.incast))?;
        required::<Int32Type, _>(&mut g, rows.clone().map(|r| i32::from(r.class)))?;
        optional::<ByteArrayType, _>(&mut g, rows.map(|r| r.group.map(group_name)))?;
        g.close()?;
    }
    file.close()?;
    Ok(())
}

/// The schema of `trace.parquet`: one row per sample of one series of one entity, in time order.
pub const TRACE_PARQUET_SCHEMA: &str = "
message sample {
    REQUIRED INT64 time_ps (INTEGER(64, false));
    REQUIRED BYTE_ARRAY series (STRING);
    REQUIRED BYTE_ARRAY entity (STRING);
    REQUIRED DOUBLE value;
}
";

/// Writes `trace.parquet` (see [`TRACE_PARQUET_SCHEMA`]) atomically: times delta-encoded, series and entity
/// names as dictionaries (a trace has few of them, repeated on every sample).
pub fn write_trace_parquet(path: impl AsRef<Path>, trace: &TimeSeries) -> io::Result<()> {
    let rows: Vec<(Time, &str, &str, f64)> = trace.rows().collect();
    let text = |s: &str| ByteArray::from(s.as_bytes().to_vec());
    write_atomic(path, |w| {
        (|| {
            let schema = Arc::new(parse_message_type(TRACE_PARQUET_SCHEMA)?);
            let props = WriterProperties::builder()
                .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
                .set_max_row_group_size(ROW_GROUP)
                .set_dictionary_enabled(false)
                .set_column_dictionary_enabled(ColumnPath::from("series"), true)
                .set_column_dictionary_enabled(ColumnPath::from("entity"), true)
                .set_column_encoding(ColumnPath::from("time_ps"), Encoding::DELTA_BINARY_PACKED)
                .set_column_encoding(ColumnPath::from("value"), Encoding::BYTE_STREAM_SPLIT)
                .build();
            let mut file = SerializedFileWriter::new(w, schema, Arc::new(props))?;
            for chunk in rows.chunks(ROW_GROUP) {
                let mut g = file.next_row_group()?;
                required::<Int64Type, _>(&mut g, chunk.iter().map(|r| r.0.ps() as i64))?;
                required::<ByteArrayType, _>(&mut g, chunk.iter().map(|r| text(r.1)))?;
                required::<ByteArrayType, _>(&mut g, chunk.iter().map(|r| text(r.2)))?;
                required::<DoubleType, _>(&mut g, chunk.iter().map(|r| r.3))?;
                g.close()?;
            }
            file.close()?;
            Ok::<_, ParquetError>(())
        })()
        .map_err(io::Error::other)
    })
}

/// Writes the row group's next column, every row of which has a value (unsigned values go into the signed
/// physical types, as Parquet's unsigned logical types specify).
fn required<T: DataType, W: Write + Send>(
    group: &mut SerializedRowGroupWriter<'_, W>,
    values: impl Iterator<Item = T::T>,
) -> parquet::errors::Result<()> {
    optional::<T, W>(group, values.map(Some))
}

/// Writes the row group's next column, nullable: definition level 1 for a value, 0 for a null.
fn optional<T: DataType, W: Write + Send>(
    group: &mut SerializedRowGroupWriter<'_, W>,
    values: impl Iterator<Item = Option<T::T>>,
) -> parquet::errors::Result<()> {
    let mut column = group
        .next_column()?
        .ok_or_else(|| ParquetError::General("more columns written than the schema has".into()))?;
    let (mut present, mut levels) = (Vec::new(), Vec::new());
    for v in values {
        levels.push(i16::from(v.is_some()));
        present.extend(v);
    }
    let required = column.typed::<T>().get_descriptor().max_def_level() == 0;
    column
        .typed::<T>()
        .write_batch(&present, (!required).then_some(&levels[..]), None)?;
    column.close()
}
