//! Fuzz target `fbx`: see `clipforge_fuzz::entries::fbx`.
#![no_main]
clipforge_fuzz::target!(fbx);
