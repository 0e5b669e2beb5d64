//! The precompiled-header advisor (`--pch N|auto`, `--verify-pch M`): which headers to put in a
//! configuration's precompiled header, chosen greedily by predicted net saving in seconds, from
//! the measured costs (module `timing`) and the exact closures:
//!
//! - candidates: headers a TU includes directly, none of whose files includes a file the scan
//!   could not find (it would not build);
//! - a file in the PCH saves its cost in every TU that reaches it (TUs that do not reach it get
//!   it too, at no parse cost: the PCH is loaded, not parsed);
//! - a PCH is built for one language: in a tree of C and C++ TUs it is C++ and only the C++ TUs
//!   count (the C TUs cannot load it);
//! - every TU pays for loading the PCH: [`LOAD_FRACTION`] of the PCH's parse cost (clang loads
//!   declarations lazily, and the PCH is built with `-fpch-instantiate-templates`, so that TUs
//!   do not instantiate its templates again; `--verify-pch` measures each PCH's load);
//! - the PCH is built once per build;
//! - with history (`--churn`), a commit that changes a file of the PCH rebuilds the PCH and every
//!   TU of the configuration instead of the TUs reaching what it changed: the objective is then
//!   the saving over the period's builds (one clean build plus one build per commit), so a header
//!   edited every day stays out.
//!
//! The verification compiles TUs with clang `-fsyntax-only` without a PCH, with the advised one
//! (`-include-pch`) and with the naive one (the same number of headers by Total Parsed), and
//! measures each run's CPU time, and each PCH's load (an empty TU with and without it). Writes nothing but its temporary folder; no CLI types.

use super::churn::History;
use super::report::{PchAdvice, PchCheck, PchHeader, PchMeasured, PchTuCheck, Report};
use super::scan::{Scanner, TuSpec};
use super::timing::{self, MeasureOptions, Timing};
use super::util::{FxMap, FxSet, absolutize, normalize};
use super::{Project, compiler::Lang};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The share of a PCH's parse cost each TU pays to load it: the median of seven PCHs measured
/// with clang 14 and `-fpch-instantiate-templates` (an empty TU with and without it, against
/// the parse: 0.008–0.014 over libstdc++, ozz and gRPC PCHs of 3–20 MB; `docs/BENCHMARKS.md`).
/// A constant so that the advice needs no compiler run (it is made from `--time-trace` too);
/// `--verify-pch` measures each PCH's own figure. (Without that flag the empty TU paid
/// 0.11–0.55: the instantiations of the PCH's templates, done again in every TU.)
pub(crate) const LOAD_FRACTION: f64 = 0.013;

/// Headers considered (the best by their gain alone), to bound the greedy search.
const MAX_CANDIDATES: usize = 400;

/// `--pch auto` stops here even if more headers would still pay.
pub(crate) const AUTO_LIMIT: usize = 100;

/// How many headers to take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PchSize {
    /// At most this many (fewer when no further header saves time).
    Headers(usize),
    /// As long as a header saves time (at most [`AUTO_LIMIT`]).
    Auto,
}

/// A `--pch` value that is neither a positive number nor `auto` (what was given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: give a number of headers (1 or more) or `auto`")]
pub struct PchSizeError(pub String);

/// Why `--verify-pch` could not give a result (one TU's failure is a note instead).
#[derive(Debug, thiserror::Error)]
pub enum PchError {
    #[error("the advised precompiled header is empty: nothing to verify")]
    EmptyAdvice,
    /// The project's TUs could not be listed.
    #[error(transparent)]
    Scan(#[from] super::ScanError),
    #[error("no translation unit of the configuration to compile")]
    NoTu,
    #[error("cannot make a temporary folder: {0}")]
    TempDir(std::io::Error),
    #[error("{}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The compiler could not be started or waited for.
    #[error(transparent)]
    Run(#[from] timing::TimingError),
    #[error(
        "{compiler} could not build the {name} precompiled header (exit {code}): {first_error}"
    )]
    Build {
        compiler: String,
        name: &'static str,
        code: i32,
        first_error: String,
    },
    /// One TU's compile failed (`how`: without a PCH, with the advised one, ...).
    #[error("{compiler} failed {how} (exit {code}): {first_error}")]
    Compile {
        compiler: String,
        how: &'static str,
        code: i32,
        first_error: String,
    },
    #[error("cancelled")]
    Cancelled,
    /// Every TU failed; the first note says why.
    #[error("no translation unit compiled all three ways{}", .0.as_ref().map_or(String::new(), |e| format!(" ({e})")))]
    NothingCompiled(Option<String>),
}

impl std::str::FromStr for PchSize {
    type Err = PchSizeError;
    fn from_str(s: &str) -> Result<PchSize, PchSizeError> {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(PchSize::Auto);
        }
        match s.parse::<usize>() {
            Ok(n) if n > 0 => Ok(PchSize::Headers(n)),
            _ => Err(PchSizeError(s.to_string())),
        }
    }
}

/// The advisor's view of one configuration.
struct Model<'a> {
    r: &'a Report,
    t: &'a Timing,
    /// The configuration's TUs (indices into `graph.tus`).
    tus: Vec<usize>,
    /// Per node: TUs of the configuration reaching it, and their builds over the period
    /// (Σ 1 + commits rebuilding each).
    reach: Vec<u32>,
    weight: Vec<f64>,
    /// Builds of every TU: N + Σ commits rebuilding each.
    all_builds: f64,
    /// Per commit: the predicted ms of the TUs it does *not* rebuild (a PCH change rebuilds
    /// them); per node, the commits changing it.
    others_ms: Vec<f64>,
    commits_of: Vec<Vec<u32>>,
}

impl<'a> Model<'a> {
    fn new(r: &'a Report, t: &'a Timing, config: u32, commits: &[Vec<u32>]) -> Model<'a> {
        let g = &r.graph;
        let n = g.nodes.len();
        // A PCH is built for one language: the other language's TUs cannot load it.
        let lang = pch_lang(r, config);
        let tus: Vec<usize> = (0..g.tus.len())
            .filter(|&i| g.tus[i].config == config && Some(tu_lang(r, i)) == lang)
            .collect();
        // TUs reaching each node (a TU reaches itself: editing it rebuilds it).
        let mut reach_tus: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (k, &i) in tus.iter().enumerate() {
            let tu = &g.tus[i];
            for &f in &tu.closure {
                reach_tus[f as usize].push(k as u32);
            }
            if !tu.closure.contains(&tu.node) {
                reach_tus[tu.node as usize].push(k as u32);
            }
        }
        let total_ms: f64 = tus.iter().map(|&i| t.predicted_ms[i]).sum();
        let mut rebuilds = vec![0u32; tus.len()];
        let mut others_ms = Vec::with_capacity(commits.len());
        let mut commits_of: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut stamp = vec![usize::MAX; tus.len()];
        for (c, nodes) in commits.iter().enumerate() {
            let mut rebuilt_ms = 0.0;
            for &f in nodes {
                commits_of[f as usize].push(c as u32);
                for &k in &reach_tus[f as usize] {
                    if stamp[k as usize] != c {
                        stamp[k as usize] = c;
                        rebuilds[k as usize] += 1;
                        rebuilt_ms += t.predicted_ms[tus[k as usize]];
                    }
                }
            }
            others_ms.push(total_ms - rebuilt_ms);
        }
        let mut reach = vec![0u32; n];
        let mut weight = vec![0.0; n];
        for f in 0..n {
            for &k in &reach_tus[f] {
                // A TU does not save its own file.
                if g.tus[tus[k as usize]].node as usize != f {
                    reach[f] += 1;
                    weight[f] += 1.0 + rebuilds[k as usize] as f64;
                }
            }
        }
        let all_builds = tus.len() as f64 + rebuilds.iter().map(|&x| x as f64).sum::<f64>();
        Model {
            r,
            t,
            tus,
            reach,
            weight,
            all_builds,
            others_ms,
            commits_of,
        }
    }

    /// Headers a TU includes directly (so they stand alone as its first includes do), reached
    /// in this configuration.
    fn candidates(&self) -> Vec<u32> {
        let g = &self.r.graph;
        (0..g.nodes.len() as u32)
            .filter(|&f| {
                let n = &g.nodes[f as usize];
                // Line 0: the driver's implicit pre-include (`stdc-predef.h`), there anyway.
                !n.is_tu
                    && self.reach[f as usize] > 0
                    && g.inc[f as usize]
                        .iter()
                        .any(|&(from, line)| g.nodes[from as usize].is_tu && line > 0)
            })
            .collect()
    }

    /// The header and everything it includes (TU files excluded).
    /// `h` and every header it includes, in the order met. `mark` is all `false` on entry and on
    /// return (a scratch reused across calls: a hash set per candidate was most of the advice's
    /// CPU on gRPC).
    fn content(&self, h: u32, mark: &mut [bool]) -> Vec<u32> {
        let g = &self.r.graph;
        let mut seen = vec![h];
        let mut stack = vec![h];
        mark[h as usize] = true;
        while let Some(x) = stack.pop() {
            for &(to, _) in &g.out[x as usize] {
                if !g.nodes[to as usize].is_tu && !mark[to as usize] {
                    mark[to as usize] = true;
                    seen.push(to);
                    stack.push(to);
                }
            }
        }
        for &x in &seen {
            mark[x as usize] = false;
        }
        seen
    }
}

/// What adding one candidate to a PCH would do ([`Pch::gain`]).
struct Trial {
    /// Net saving, ms.
    gain: f64,
    /// Files of the candidate not in the PCH yet.
    n_new: usize,
    /// The saving alone (before the PCH's load, build and churn): a bound on `gain`.
    saved: f64,
}

struct Pch {
    member: Vec<bool>,
    content_ms: f64,
    files: usize,
    touched: Vec<bool>,
    n_touched: usize,
    churn_ms: f64,
}

impl Pch {
    fn new(m: &Model) -> Pch {
        Pch {
            member: vec![false; m.r.graph.nodes.len()],
            content_ms: 0.0,
            files: 0,
            touched: vec![false; m.others_ms.len()],
            n_touched: 0,
            churn_ms: 0.0,
        }
    }

    /// The objective's change (ms over the period's builds) if `content` joined, and the new
    /// files and commits it brings.
    /// Net saving (ms per clean build and its share of the history's rebuilds) of adding
    /// `content`, and how many of its files are new. `commits` is a scratch (the commits the new
    /// files would newly touch); nothing else is allocated, as this runs for every candidate at
    /// every step of the greedy search.
    fn gain(&self, m: &Model, content: &[u32], commits: &mut Vec<u32>) -> Trial {
        // One pass, summed in `content`'s order from -0.0 (as `Iterator::sum` does).
        let (mut n_new, mut add_ms, mut saved) = (0, -0.0, -0.0);
        for &f in content {
            if !self.member[f as usize] {
                let cost = m.t.cost_ms[f as usize];
                n_new += 1;
                add_ms += cost;
                saved += cost * m.weight[f as usize];
            }
        }
        let new = content
            .iter()
            .copied()
            .filter(|&f| !self.member[f as usize]);
        self.new_commits(m, new, commits);
        let rebuild_others: f64 = commits.iter().map(|&c| m.others_ms[c as usize]).sum();
        let load = LOAD_FRACTION * add_ms * m.all_builds;
        let builds_before = 1.0 + self.n_touched as f64;
        let builds_after = builds_before + commits.len() as f64;
        let build = builds_after * (self.content_ms + add_ms) - builds_before * self.content_ms;
        Trial {
            gain: saved - load - build - rebuild_others,
            n_new,
            saved,
        }
    }

    /// The commits touching `files` that touch none of the PCH yet, sorted, each once.
    fn new_commits(&self, m: &Model, files: impl Iterator<Item = u32>, out: &mut Vec<u32>) {
        out.clear();
        if m.others_ms.is_empty() {
            return; // no history
        }
        out.extend(
            files
                .flat_map(|f| m.commits_of[f as usize].iter().copied())
                .filter(|&c| !self.touched[c as usize]),
        );
        out.sort_unstable();
        out.dedup();
    }

    /// Adds `content`'s files that are not members yet.
    fn add(&mut self, m: &Model, content: &[u32]) -> usize {
        let new: Vec<u32> = content
            .iter()
            .copied()
            .filter(|&f| !self.member[f as usize])
            .collect();
        let mut commits = Vec::new();
        self.new_commits(m, new.iter().copied(), &mut commits);
        self.take(m, &new, &commits);
        new.len()
    }

    fn take(&mut self, m: &Model, new: &[u32], commits: &[u32]) {
        for &f in new {
            self.member[f as usize] = true;
            self.content_ms += m.t.cost_ms[f as usize];
        }
        self.files += new.len();
        for &c in commits {
            self.touched[c as usize] = true;
            self.churn_ms += m.others_ms[c as usize];
        }
        self.n_touched += commits.len();
    }

    /// Per clean build: (saved, load, build) ms.
    fn clean_build(&self, m: &Model) -> (f64, f64, f64) {
        let saved: f64 = (0..self.member.len())
            .filter(|&f| self.member[f])
            .map(|f| m.t.cost_ms[f] * m.reach[f] as f64)
            .sum();
        let load = LOAD_FRACTION * self.content_ms * m.tus.len() as f64;
        (saved, load, self.content_ms)
    }
}

/// Advises a precompiled header for configuration `config` (0 without configurations) of a
/// report whose costs `t` has (`Timing::from_traces`). `history`: the commits of `--churn`'s
/// period and its length in days.
pub fn advise(
    r: &Report,
    t: &Timing,
    config: u32,
    size: PchSize,
    history: Option<(&History, u32)>,
) -> PchAdvice {
    let commits = history
        .map(|(h, _)| super::churn::commit_nodes(r, h))
        .unwrap_or_default();
    let m = Model::new(r, t, config, &commits);
    let g = &r.graph;
    // A header that includes a file the scan could not find would not build as a PCH (an
    // optional SDK's header, say): left out with everything that includes it.
    let by_path: FxMap<&str, u32> = g
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.path.as_str(), i as u32))
        .collect();
    let broken: FxSet<u32> = r
        .missing
        .iter()
        .flat_map(|x| &x.tried_by)
        .filter_map(|site| by_path.get(site.file.as_str()).copied())
        .collect();
    let mut mark = vec![false; g.nodes.len()];
    let mut scratch = Vec::new();
    let mut cands: Vec<(f64, u32, Vec<u32>)> = {
        let empty = Pch::new(&m);
        m.candidates()
            .into_iter()
            .map(|h| (h, m.content(h, &mut mark)))
            .filter(|(_, c)| !c.iter().any(|f| broken.contains(f)))
            .map(|(h, c)| (empty.gain(&m, &c, &mut scratch).gain, h, c))
            .collect()
    };
    cands.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut naive_pool: Vec<u32> = cands.iter().map(|c| c.1).collect();
    cands.truncate(MAX_CANDIDATES);
    let limit = match size {
        PchSize::Headers(n) => n,
        PchSize::Auto => AUTO_LIMIT,
    };
    let mut pch = Pch::new(&m);
    let mut headers = Vec::new();
    let mut taken = vec![false; cands.len()];
    // Lazy greedy: a candidate's gain is at most its saving, and its saving only shrinks as the
    // PCH grows (fewer of its files are new), so a saving computed at an earlier step bounds
    // its gain now. Candidates are tried by that bound, best first, until the bound is below
    // the best gain found: the same choice as trying all (ties: the lower index), with a
    // fraction of the trials. The bound needs costs and predicted times that are finite and not
    // negative (then the load, build and churn terms are too); else every candidate is tried
    // at every step.
    let lazy = (m.t.cost_ms.iter().chain(&m.t.predicted_ms)).all(|c| c.is_finite() && *c >= 0.0);
    let mut bound = vec![f64::INFINITY; cands.len()];
    let mut order: Vec<usize> = Vec::with_capacity(cands.len());
    while headers.len() < limit {
        order.clear();
        order.extend((0..cands.len()).filter(|&k| !taken[k]));
        order.sort_by(|&a, &b| bound[b].total_cmp(&bound[a]).then(a.cmp(&b)));
        let mut best: Option<(f64, usize)> = None;
        for &k in &order {
            if best.is_some_and(|b| bound[k] < b.0) {
                break;
            }
            let trial = pch.gain(&m, &cands[k].2, &mut scratch);
            if lazy {
                bound[k] = trial.saved;
            }
            if trial.n_new == 0 {
                continue;
            }
            if best.is_none_or(|b| trial.gain > b.0 || (trial.gain == b.0 && k < b.1)) {
                best = Some((trial.gain, k));
            }
        }
        let Some((gain, k)) = best.filter(|b| b.0 > 0.0) else {
            break;
        };
        taken[k] = true;
        let files_added = pch.add(&m, &cands[k].2);
        let h = cands[k].1 as usize;
        headers.push(PchHeader {
            path: g.nodes[h].path.clone(),
            abs: g.nodes[h].abs.clone(),
            tus: m.reach[h],
            cost_ms: round3(t.cost_ms[h]),
            files_added,
            gain_s: round6(gain / 1000.0),
        });
    }
    let (saved, load, build) = pch.clean_build(&m);
    // The naive choice: as many headers, by lines × TUs of this configuration.
    naive_pool.sort_by_key(|&f| {
        std::cmp::Reverse(g.nodes[f as usize].lines as u64 * m.reach[f as usize] as u64)
    });
    naive_pool.truncate(headers.len());
    let mut naive = Pch::new(&m);
    for &h in &naive_pool {
        naive.add(&m, &m.content(h, &mut mark));
    }
    let (ns, nl, nb) = naive.clean_build(&m);
    let period = history.map(|(_, days)| {
        let gain = Pch::new(&m).gain_of_set(&m, &pch);
        (days, pch.n_touched, pch.churn_ms / 1000.0, gain / 1000.0)
    });
    let lang = pch_lang(r, config).unwrap_or(Lang::Cxx);
    PchAdvice {
        config: r.configs.get(config as usize).map(|c| c.name.clone()),
        pch_h: pch_text(&headers.iter().map(|h| h.abs.clone()).collect::<Vec<_>>()),
        headers,
        files: pch.files,
        content_ms: round3(pch.content_ms),
        saved_s: round6(saved / 1000.0),
        load_s: round6(load / 1000.0),
        build_s: round6(build / 1000.0),
        net_s: round6((saved - load - build) / 1000.0),
        churn_days: period.map(|p| p.0),
        churn_commits: period.map(|p| p.1),
        churn_s: period.map(|p| round6(p.2)),
        period_net_s: period.map(|p| round6(p.3)),
        naive: naive_pool
            .iter()
            .map(|&f| g.nodes[f as usize].path.clone())
            .collect(),
        naive_net_s: round6((ns - nl - nb) / 1000.0),
        build_flags: [build_flags(lang), &["pch.h", "-o", "pch.h.pch"]]
            .concat()
            .into_iter()
            .map(String::from)
            .collect(),
        use_flags_clang: vec!["-include-pch".into(), "pch.h.pch".into()],
        use_flags_gcc: vec!["-include".into(), "pch.h".into()],
        check: None,
    }
}

impl Pch {
    /// The objective of `set` as a whole (ms over the period's builds): `self` is empty.
    fn gain_of_set(&self, m: &Model, set: &Pch) -> f64 {
        let content: Vec<u32> = (0..set.member.len() as u32)
            .filter(|&f| set.member[f as usize])
            .collect();
        self.gain(m, &content, &mut Vec::new()).gain
    }
}

/// A TU's language, as the scan compiles it (by its file's extension).
fn tu_lang(r: &Report, i: usize) -> Lang {
    let g = &r.graph;
    Lang::of_path(&g.nodes[g.tus[i].node as usize].abs)
}

/// The language of configuration `config`'s PCH: C++ if any of its TUs is (a PCH is built for
/// one language; the C TUs of a mixed tree do without it). `None`: no TU.
fn pch_lang(r: &Report, config: u32) -> Option<Lang> {
    let g = &r.graph;
    let mut langs = (0..g.tus.len())
        .filter(|&i| g.tus[i].config == config)
        .map(|i| tu_lang(r, i));
    let first = langs.next()?;
    Some(if first == Lang::Cxx || langs.any(|l| l == Lang::Cxx) {
        Lang::Cxx
    } else {
        Lang::C
    })
}

/// The flags (clang's) that build a PCH of `lang` from a header named next. C++: the
/// templates its headers use are instantiated once in the PCH (`-fpch-instantiate-templates`,
/// clang 11+, what CMake passes); without it every TU instantiates them again when it loads the
/// PCH, which costs 0.14–0.55 of the PCH's parse time per TU instead of 0.01–0.02.
fn build_flags(lang: Lang) -> &'static [&'static str] {
    match lang {
        Lang::C => &["-x", "c-header"],
        Lang::Cxx => &["-fpch-instantiate-templates", "-x", "c++-header"],
    }
}

/// `pch.h`: the headers by absolute path, in the order chosen.
pub(crate) fn pch_text(headers: &[PathBuf]) -> String {
    let mut s = String::from(
        "// Precompiled header advised by `clipforge headers --pch` (best first).\n\
         // Build: clang++ <the TUs' flags> -fpch-instantiate-templates -x c++-header pch.h -o pch.h.pch\n\
         // Use:   clang++ ... -include-pch pch.h.pch  (g++: pch.h.gch beside it, -include pch.h)\n",
    );
    for h in headers {
        s.push_str(&format!("#include \"{}\"\n", h.display()));
    }
    s
}

/// The parse cost (ms) TU `i` saves with a PCH holding `members`: the costs of its closure's
/// files in the PCH (loading it not yet subtracted).
fn reached_ms(r: &Report, t: &Timing, member: &[bool], i: usize) -> f64 {
    let tu = &r.graph.tus[i];
    tu.closure
        .iter()
        .filter(|&&f| f != tu.node && member[f as usize])
        .map(|&f| t.cost_ms[f as usize])
        .sum()
}

/// Per graph node: whether the PCH of `headers` (absolute paths) holds it.
fn members(r: &Report, headers: &[PathBuf]) -> Vec<bool> {
    let g = &r.graph;
    let by_abs: FxMap<PathBuf, u32> = g
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (normalize(&n.abs), i as u32))
        .collect();
    let mut member = vec![false; g.nodes.len()];
    let mut stack: Vec<u32> = headers
        .iter()
        .filter_map(|h| by_abs.get(&normalize(h)).copied())
        .collect();
    while let Some(x) = stack.pop() {
        if std::mem::replace(&mut member[x as usize], true) {
            continue;
        }
        for &(to, _) in &g.out[x as usize] {
            if !g.nodes[to as usize].is_tu && !member[to as usize] {
                stack.push(to);
            }
        }
    }
    member
}

/// `--verify-pch M`: builds the advised and the naive PCH with clang and compiles `m` TUs of
/// the advice's configuration three ways (none, advised, naive), `done` counting TUs finished.
/// TUs are taken evenly over the configuration, unmeasured ones first.
pub fn verify(
    project: &Project,
    r: &Report,
    t: &Timing,
    advice: &PchAdvice,
    m: usize,
    opts: &MeasureOptions,
    done: &AtomicUsize,
) -> Result<PchCheck, PchError> {
    if advice.headers.is_empty() {
        return Err(PchError::EmptyAdvice);
    }
    let g = &r.graph;
    let config = advice
        .config
        .as_ref()
        .and_then(|n| r.configs.iter().position(|c| &c.name == n))
        .unwrap_or(0) as u32;
    let specs = Scanner::tu_specs(project)?;
    let spec_of: FxMap<(PathBuf, u32), &TuSpec> = specs
        .iter()
        .map(|s| ((absolutize(&s.file), s.config), s))
        .collect();
    let lang = pch_lang(r, config);
    let tus: Vec<(usize, &TuSpec)> = (0..g.tus.len())
        .filter(|&i| g.tus[i].config == config && Some(tu_lang(r, i)) == lang)
        .filter_map(|i| {
            let abs = normalize(&g.nodes[g.tus[i].node as usize].abs);
            spec_of.get(&(abs, config)).map(|s| (i, *s))
        })
        .collect();
    let Some(&(_, rep)) = tus.first() else {
        return Err(PchError::NoTu);
    };
    let picked = pick_tus(&tus, t, m);

    let dir = tempfile::tempdir().map_err(PchError::TempDir)?;
    let compiler = timing::driver_for(rep, opts.compiler.as_deref());
    let naive_abs: Vec<PathBuf> = advice
        .naive
        .iter()
        .filter_map(|p| g.nodes.iter().find(|n| &n.path == p).map(|n| n.abs.clone()))
        .collect();
    let advised_abs: Vec<PathBuf> = advice.headers.iter().map(|h| h.abs.clone()).collect();
    let mut notes = Vec::new();
    let b = PchBuild {
        r,
        rep,
        compiler: &compiler,
        lang: rep.lang,
        dir: dir.path(),
    };
    let mut build = |name: &'static str, hs: &[PathBuf]| b.build(name, hs, &mut notes);
    let (adv_pch, adv_build, advised_abs) = build("advised", &advised_abs)?;
    let (naive_pch, naive_build, naive_abs) = build("naive", &naive_abs)?;
    let [adv_load, naive_load] = b.load_ms(&[&adv_pch, &naive_pch], opts)?;
    let rows = compile_all(
        &picked,
        &compiler,
        [&adv_pch, &naive_pch],
        dir.path(),
        opts,
        done,
    )?;
    let (adv_member, naive_member) = (members(r, &advised_abs), members(r, &naive_abs));
    let content = |mem: &[bool]| -> f64 {
        (0..mem.len())
            .filter(|&f| mem[f])
            .map(|f| t.cost_ms[f])
            .sum()
    };
    let (adv_content, naive_content) = (content(&adv_member), content(&naive_member));
    let mut per_tu = Vec::new();
    // Σ reached ms per PCH: the prediction is that minus the load, once per TU.
    let (mut reach_a, mut reach_n) = (0.0, 0.0);
    for (i, res) in rows {
        let path = &g.nodes[g.tus[i].node as usize].path;
        match res {
            Ok([w0, wa, wn]) => {
                let (ra, rn) = (
                    reached_ms(r, t, &adv_member, i),
                    reached_ms(r, t, &naive_member, i),
                );
                reach_a += ra;
                reach_n += rn;
                per_tu.push(PchTuCheck {
                    path: path.clone(),
                    without_ms: round3(w0 * 1000.0),
                    advised_ms: round3(wa * 1000.0),
                    naive_ms: round3(wn * 1000.0),
                    advised_predicted_ms: round3(ra - adv_load),
                    naive_predicted_ms: round3(rn - naive_load),
                });
            }
            Err(e) => notes.push(format!("{path}: {e} (left out)")),
        }
    }
    let n = per_tu.len();
    if n == 0 {
        return Err(PchError::NothingCompiled(notes.first().cloned()));
    }
    let s = |f: fn(&PchTuCheck) -> f64| per_tu.iter().map(f).sum::<f64>() / 1000.0;
    let (without, with_a, with_n) = (s(|x| x.without_ms), s(|x| x.advised_ms), s(|x| x.naive_ms));
    let measured = |build_s: f64, with: f64, reach: f64, load: f64, content: f64| {
        let saving = without - with;
        let pred = (reach - load * n as f64) / 1000.0;
        PchMeasured {
            build_s: round6(build_s),
            with_s: round6(with),
            measured_saving_s: round6(saving),
            predicted_saving_s: round6(pred),
            error_percent: if saving.abs() > 0.0 {
                round3(100.0 * (pred - saving) / saving)
            } else {
                0.0
            },
            load_ms: round3(load),
            content_ms: round3(content),
            load_fraction: if content > 0.0 {
                round3(load / content)
            } else {
                0.0
            },
            advice_predicted_saving_s: round6(
                (reach - LOAD_FRACTION * content * n as f64) / 1000.0,
            ),
        }
    };
    Ok(PchCheck {
        tus: n,
        without_s: round6(without),
        advised: measured(adv_build, with_a, reach_a, adv_load, adv_content),
        naive: measured(naive_build, with_n, reach_n, naive_load, naive_content),
        per_tu,
        notes,
    })
}

/// A TU's three CPU times (without, advised, naive), or why it failed.
type Row = (usize, Result<[f64; 3], PchError>);

/// Compiles each of `picked` three ways (`three_ways`) in parallel (`opts.jobs`), `done`
/// counting TUs finished: the rows in report order.
fn compile_all(
    picked: &[(usize, &TuSpec)],
    compiler: &str,
    pchs: [&PathBuf; 2],
    dir: &Path,
    opts: &MeasureOptions,
    done: &AtomicUsize,
) -> Result<Vec<Row>, PchError> {
    let jobs = if opts.jobs == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    } else {
        opts.jobs
    };
    let next = AtomicUsize::new(0);
    let rows: std::sync::Mutex<Vec<Row>> = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..jobs.min(picked.len()) {
            sc.spawn(|| {
                loop {
                    if opts.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
                        break;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(i, spec)) = picked.get(k) else {
                        break;
                    };
                    let res =
                        three_ways(spec, compiler, [None, Some(pchs[0]), Some(pchs[1])], k, dir);
                    rows.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((i, res));
                    done.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    if opts.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
        return Err(PchError::Cancelled);
    }
    let mut rows = rows.into_inner().unwrap_or_else(|p| p.into_inner());
    rows.sort_by_key(|x| x.0);
    Ok(rows)
}

/// `m` of the configuration's TUs, evenly over the unmeasured ones (then the measured ones), in
/// report order.
fn pick_tus<'a>(tus: &[(usize, &'a TuSpec)], t: &Timing, m: usize) -> Vec<(usize, &'a TuSpec)> {
    let (unmeasured, measured): (Vec<_>, Vec<_>) =
        tus.iter().partition(|(i, _)| t.measured_ms[*i].is_none());
    let pool: Vec<(usize, &TuSpec)> = unmeasured.into_iter().chain(measured).collect();
    let m = m.min(pool.len());
    let step = if m == 0 {
        1.0
    } else {
        pool.len() as f64 / m as f64
    };
    let mut picked: Vec<(usize, &TuSpec)> = (0..m)
        .map(|k| pool[((k as f64 * step) as usize).min(pool.len() - 1)])
        .collect();
    picked.sort_by_key(|p| p.0);
    picked.dedup_by_key(|p| p.0);
    picked
}

/// What building a verification PCH needs.
struct PchBuild<'a> {
    r: &'a Report,
    /// The TU whose flags build it.
    rep: &'a TuSpec,
    compiler: &'a str,
    lang: Lang,
    dir: &'a Path,
}

impl PchBuild<'_> {
    /// Builds `<name>.h.pch` of `hs`: its path, CPU seconds and the headers it holds. A header
    /// that does not stand alone (it needs a macro its includers define first, say) fails the
    /// build: the file the error names if it is one of `hs`, else the headers whose closure
    /// holds it, are left out, named in a note, and the rest built again.
    fn build(
        &self,
        name: &'static str,
        hs: &[PathBuf],
        notes: &mut Vec<String>,
    ) -> Result<(PathBuf, f64, Vec<PathBuf>), PchError> {
        let (g, compiler) = (&self.r.graph, self.compiler);
        let mut hs = hs.to_vec();
        loop {
            let h = self.dir.join(format!("{name}.h"));
            std::fs::write(&h, pch_text(&hs)).map_err(|source| PchError::Write {
                path: h.clone(),
                source,
            })?;
            let out = self.dir.join(format!("{name}.h.pch"));
            let mut cmd = timing::compile_command(self.rep, compiler);
            cmd.arg("-w")
                .args(build_flags(self.lang))
                .arg(&h)
                .arg("-o")
                .arg(&out);
            let err = self.dir.join(format!("{name}.err"));
            let ran = timing::run_cpu(&mut cmd, compiler, &err)?;
            if ran.ok {
                return Ok((out, ran.cpu_s, hs));
            }
            let failed = error_file(&ran.first_error).and_then(|f| {
                g.nodes
                    .iter()
                    .position(|n| normalize(&n.abs) == normalize(&f))
            });
            let before = hs.len();
            if let Some(node) = failed {
                // A listed header that fails by itself goes alone: included by absolute path it
                // may clash where its includers reach another file by name (GCC's `stddef.h`
                // beside clang's own, say), and they build without it.
                let path = normalize(&g.nodes[node].abs);
                if hs.iter().any(|x| normalize(x) == path) {
                    hs.retain(|x| normalize(x) != path);
                } else {
                    hs.retain(|x| !members(self.r, std::slice::from_ref(x))[node]);
                }
            }
            if hs.len() == before || hs.is_empty() {
                return Err(PchError::Build {
                    compiler: compiler.to_string(),
                    name,
                    code: ran.code,
                    first_error: ran.first_error,
                });
            }
            notes.push(format!(
                "{name} PCH: left out what includes {} (its build failed: {})",
                failed.map_or(String::new(), |n| g.nodes[n].path.clone()),
                ran.first_error
            ));
        }
    }
}

/// Runs of an empty TU per PCH (and without one) to measure the load: each is 20–100 ms, and
/// the median of five stays within a few ms at a load of 15 on 2 cores.
const LOAD_RUNS: usize = 5;

impl PchBuild<'_> {
    /// CPU ms each PCH of `pchs` costs to load: an empty TU with the representative TU's
    /// flags compiled `-fsyntax-only` with it, less without (the medians of [`LOAD_RUNS`]
    /// rounds, the order rotated per round).
    fn load_ms<const N: usize>(
        &self,
        pchs: &[&PathBuf; N],
        opts: &MeasureOptions,
    ) -> Result<[f64; N], PchError> {
        let ext = if self.rep.lang == Lang::C { "c" } else { "cc" };
        let empty = self.dir.join(format!("empty.{ext}"));
        std::fs::write(&empty, "").map_err(|source| PchError::Write {
            path: empty.clone(),
            source,
        })?;
        let mut runs: Vec<Vec<f64>> = vec![Vec::new(); N + 1];
        for round in 0..LOAD_RUNS {
            for j in 0..=N {
                if opts.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
                    return Err(PchError::Cancelled);
                }
                let w = (j + round) % (N + 1);
                let mut cmd = timing::compile_command(self.rep, self.compiler);
                cmd.args(["-fsyntax-only", "-w"]);
                if w > 0 {
                    cmd.arg("-include-pch").arg(pchs[w - 1]);
                }
                cmd.arg(&empty);
                let err = self.dir.join(format!("empty-{w}.err"));
                let ran = timing::run_cpu(&mut cmd, self.compiler, &err)?;
                if !ran.ok {
                    return Err(PchError::Compile {
                        compiler: self.compiler.to_string(),
                        how: "compiling an empty TU with a PCH",
                        code: ran.code,
                        first_error: ran.first_error,
                    });
                }
                runs[w].push(ran.cpu_s);
            }
        }
        let medians: Vec<f64> = runs.iter_mut().map(|v| median(v)).collect();
        Ok(std::array::from_fn(|k| {
            (1000.0 * (medians[k + 1] - medians[0])).max(0.0)
        }))
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// One TU compiled `-fsyntax-only` once per PCH of `pchs` (`None`: without), the order rotated
/// by `k` so that a drift in the machine's speed spreads over the three: CPU seconds of each.
fn three_ways(
    spec: &TuSpec,
    compiler: &str,
    pchs: [Option<&PathBuf>; 3],
    k: usize,
    dir: &Path,
) -> Result<[f64; 3], PchError> {
    let mut out = [0.0; 3];
    for j in 0..3 {
        let w = (j + k) % 3;
        let mut cmd = timing::compile_command(spec, compiler);
        cmd.args(["-fsyntax-only", "-w"]);
        if let Some(p) = pchs[w] {
            cmd.arg("-include-pch").arg(p);
        }
        cmd.arg(absolutize(&spec.file));
        let ran = timing::run_cpu(&mut cmd, compiler, &dir.join(format!("{k}-{w}.err")))?;
        if !ran.ok {
            let how = [
                "without a PCH",
                "with the advised PCH",
                "with the naive PCH",
            ][w];
            return Err(PchError::Compile {
                compiler: compiler.to_string(),
                how,
                code: ran.code,
                first_error: ran.first_error,
            });
        }
        out[w] = ran.cpu_s;
    }
    Ok(out)
}

/// The file a compiler message starts with (`path:line:col: error: …`).
fn error_file(msg: &str) -> Option<PathBuf> {
    let b = msg.as_bytes();
    (0..b.len())
        .filter(|&i| b[i] == b':')
        .find(|&i| {
            let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            digits > 0 && b.get(i + 1 + digits) == Some(&b':')
        })
        .map(|i| PathBuf::from(&msg[..i]))
        .filter(|p| !p.as_os_str().is_empty())
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CompilerChoice, Mode, Progress, ScanOptions};

    /// Writes `files` under a temporary root and scans it (all branches: no compiler needed).
    fn scan(files: &[(&str, &str)]) -> (tempfile::TempDir, Report) {
        let d = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(d.path().join(name), text).unwrap();
        }
        let p = Project {
            roots: vec![d.path().to_path_buf()],
            compiler: CompilerChoice::None,
            ..Default::default()
        };
        let o = ScanOptions {
            mode: Mode::AllBranches,
            use_disk_cache: false,
            ..Default::default()
        };
        let r = crate::scan(&p, &o, &Progress::default()).unwrap().primary;
        (d, r)
    }

    /// Costs: `h.h` 100 ms, everything else nothing; every TU predicted at 100 ms.
    fn costs(r: &Report) -> Timing {
        let g = &r.graph;
        Timing {
            cost_ms: g
                .nodes
                .iter()
                .map(|n| if n.path.ends_with("h.h") { 100.0 } else { 0.0 })
                .collect(),
            cost_measured: vec![true; g.nodes.len()],
            predicted_ms: vec![100.0; g.tus.len()],
            measured_ms: vec![None; g.tus.len()],
            unmatched_files: 0,
        }
    }

    /// Three C++ and three C TUs include one 100 ms header. The PCH is C++: the C TUs cannot
    /// load it, so it saves 3 × 100 ms, not 6 × (the former model), and every one of the three
    /// loads it at [`LOAD_FRACTION`] (measured with `-fpch-instantiate-templates`: 0.013, not
    /// the former 0.05) of its 100 ms. Its build flags instantiate the templates once; a C
    /// PCH has none to instantiate.
    #[test]
    fn a_cxx_pch_saves_in_cxx_tus_only_and_loads_at_the_measured_fraction() {
        let inc = "#include \"h.h\"\nint x;\n";
        let (_d, r) = scan(&[
            ("h.h", "#pragma once\nint h;\n"),
            ("a.cc", inc),
            ("b.cc", inc),
            ("c.cc", inc),
            ("d.c", inc),
            ("e.c", inc),
            ("f.c", inc),
        ]);
        assert_eq!(r.graph.tus.len(), 6);
        let a = advise(&r, &costs(&r), 0, PchSize::Headers(1), None);
        assert_eq!(a.headers.len(), 1);
        assert_eq!(a.headers[0].tus, 3);
        assert_eq!(a.saved_s, 0.3);
        assert_eq!(a.load_s, round6(LOAD_FRACTION * 0.1 * 3.0));
        assert_eq!(a.load_s, 0.0039);
        assert_eq!(a.build_s, 0.1);
        assert_eq!(a.net_s, 0.1961);
        assert_eq!(
            a.build_flags,
            [
                "-fpch-instantiate-templates",
                "-x",
                "c++-header",
                "pch.h",
                "-o",
                "pch.h.pch"
            ]
        );
        assert!(a.pch_h.contains("-fpch-instantiate-templates"));

        // A C tree: a C PCH (no templates to instantiate), every TU saving.
        let (_d, r) = scan(&[("h.h", "int h;\n"), ("d.c", inc), ("e.c", inc)]);
        let a = advise(&r, &costs(&r), 0, PchSize::Headers(1), None);
        assert_eq!(a.saved_s, 0.2);
        assert_eq!(
            a.build_flags,
            ["-x", "c-header", "pch.h", "-o", "pch.h.pch"]
        );
    }

    #[test]
    fn the_failing_file_is_read_from_the_message() {
        assert_eq!(
            error_file("/a/b c.h:35:2: error: \"private\""),
            Some(PathBuf::from("/a/b c.h"))
        );
        assert_eq!(
            error_file("x.h:3:10: fatal error: 'y.h' file not found"),
            Some(PathBuf::from("x.h"))
        );
        assert_eq!(error_file("clang: error: no input files"), None);
        assert_eq!(error_file("no message"), None);
    }
}
