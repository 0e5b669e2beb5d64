//! Limits of the format that the readers enforce: the largest clip and the largest component
//! magnitude a valid buffer may declare. The offline side's memory budgets build on these
//! (`clipforge_anim::limits`).

/// Largest bones × samples an importer accepts (2 GB of raw samples); the biggest real clips
/// are far below (44 × 574 for ACL's 27_06). Guards against absurd headers allocating memory.
pub const MAX_TOTAL_SAMPLES: usize = 50_000_000;

/// Largest magnitude accepted for a translation or scale component. Beyond it float32
/// arithmetic in object space loses all precision at the 0.01 cm scale we measure
/// (`09_02_with_inf_error` holds 1e25), so such clips are refused with a clear error.
pub const MAX_COMPONENT_MAGNITUDE: f32 = 1.0e7;
