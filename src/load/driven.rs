//! What the executor runs in a real run: a prepared workload's operations on a driver session,
//! and the driver's errors sorted into [`ErrorKind`]s.

use std::future::Future;
use std::sync::Arc;

use scylla::client::session::Session;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError, WriteType};

use super::executor::Operations;
use crate::spec::OpKind;
use crate::stats::ErrorKind;
use crate::workload::{OpError, Prepared, Workload};

/// A workload's operations on a driver session. The executor is compiled for each workload:
/// an operation's future is the workload's own [`Workload::execute`], polled where it stands.
pub struct Driven<W: Workload> {
    pub session: Arc<Session>,
    pub workload: Arc<Prepared<W>>,
    /// Retries and speculative executions of the workload's statements.
    pub counters: Arc<super::session::DriverCounters>,
}

impl<W: Workload> Operations for Driven<W> {
    type Error = OpError;

    fn op_for(&self, cycle: u64) -> OpKind {
        self.workload.workload.op_for(cycle)
    }

    fn execute(
        &self,
        kind: OpKind,
        cycle: u64,
        rampup: bool,
    ) -> impl Future<Output = Result<(), OpError>> + Send {
        W::execute(&self.workload, &self.session, kind, cycle, rampup)
    }

    fn kind_of(e: &OpError) -> ErrorKind {
        match e {
            OpError::Driver(e) => classify(e),
            OpError::Mismatch => ErrorKind::Mismatch,
        }
    }
}

/// Maps one attempt's error to its kind.
pub fn classify_attempt(a: &RequestAttemptError) -> ErrorKind {
    match a {
        RequestAttemptError::DbError(db, _) => match db {
            DbError::ReadTimeout { consistency, .. } if consistency.is_serial() => {
                ErrorKind::CasReadTimeout
            }
            DbError::ReadTimeout { .. } => ErrorKind::ReadTimeout,
            DbError::WriteTimeout {
                write_type: WriteType::Cas,
                ..
            } => ErrorKind::CasWriteTimeout,
            DbError::WriteTimeout { .. } => ErrorKind::WriteTimeout,
            DbError::Unavailable { .. } => ErrorKind::Unavailable,
            DbError::Overloaded => ErrorKind::Overloaded,
            _ => ErrorKind::Other,
        },
        RequestAttemptError::BrokenConnectionError(_)
        | RequestAttemptError::UnableToAllocStreamId => ErrorKind::ConnectionLost,
        _ => ErrorKind::Other,
    }
}

/// Maps a driver error to its kind.
pub fn classify(e: &ExecutionError) -> ErrorKind {
    match e {
        ExecutionError::RequestTimeout(_) => ErrorKind::ClientTimeout,
        ExecutionError::ConnectionPoolError(_) => ErrorKind::ConnectionLost,
        ExecutionError::LastAttemptError(a) => classify_attempt(a),
        _ => ErrorKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paxos_timeouts_are_counted_apart_from_plain_ones() {
        use scylla::statement::Consistency;
        let db = |e: DbError| {
            ExecutionError::LastAttemptError(RequestAttemptError::DbError(e, String::new()))
        };
        let write = |write_type| DbError::WriteTimeout {
            consistency: Consistency::Quorum,
            received: 1,
            required: 2,
            write_type,
        };
        let read = |consistency| DbError::ReadTimeout {
            consistency,
            received: 1,
            required: 2,
            data_present: false,
        };
        assert_eq!(
            classify(&db(write(WriteType::Cas))),
            ErrorKind::CasWriteTimeout
        );
        assert_eq!(
            classify(&db(write(WriteType::Simple))),
            ErrorKind::WriteTimeout
        );
        assert_eq!(
            classify(&db(read(Consistency::Serial))),
            ErrorKind::CasReadTimeout
        );
        assert_eq!(
            classify(&db(read(Consistency::LocalSerial))),
            ErrorKind::CasReadTimeout
        );
        assert_eq!(
            classify(&db(read(Consistency::Quorum))),
            ErrorKind::ReadTimeout
        );
        assert_eq!(ErrorKind::CasWriteTimeout.name(), "cas_write_timeout");
    }
}
