//! The runtime (`clipforge-runtime`): the sampling API, bit-equality with the old decoder, the jobs.

mod api;
mod equal;
mod hostile_v4;
mod jobs;
