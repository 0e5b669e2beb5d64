//! Fuzz target `jobs`: the runtime jobs' validate()/run() (see `clipforge_fuzz::entries::jobs`).
#![no_main]
clipforge_fuzz::target!(jobs);
