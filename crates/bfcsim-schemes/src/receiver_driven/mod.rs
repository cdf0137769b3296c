//! The transports whose receivers schedule their senders, each with its switch and NIC sides written against
//! [`crate::fabric`]:
//!
//! - [`aeolus`]: Aeolus (Hu et al., SIGCOMM 2020): selective dropping of first-RTT packets and probe-driven
//!   recovery, an option of Homa and ExpressPass (PayDebt's Homa(A), EP(A)).
//! - [`expresspass`]: ExpressPass (Cho et al., SIGCOMM 2017): receiver-paced credits rate-limited at every
//!   port, and the credit feedback loop.
//! - [`homa`]: Homa (Montazeri et al., SIGCOMM 2018): unscheduled bytes at priority levels, and the
//!   receiver's grant scheduler with overcommitment.
//! - [`ndp`]: NDP (Handley et al., SIGCOMM 2017): trimming switches, and receivers that pace a PULL per
//!   packet.
//! - [`paydebt`]: PayDebt (Liu et al., IEEE TPDS): a first BDP unscheduled that pays its bandwidth back with
//!   debts, data-driven tokens under a token congestion control, debts and tokens rate-limited together.
//! - [`rccc`]: the Ultra Ethernet transport's receiver credit congestion control (UET 1.0): receivers pace
//!   credit to their senders, alone or beside NSCC's window.
//! - [`shaper`]: the rate limiter of a port's credits (ExpressPass) or debts and tokens (PayDebt).

pub mod aeolus;
pub mod expresspass;
pub mod homa;
pub mod ndp;
pub mod paydebt;
pub mod priorities;
pub mod rccc;
pub mod shaper;
