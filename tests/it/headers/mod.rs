//! The header profiler (`clipforge-headers`) and its CLI.

mod churn;
mod cli;
mod configs;
mod cuts;
mod gxx;
mod hostile;
mod pch;
mod report;
mod time;
