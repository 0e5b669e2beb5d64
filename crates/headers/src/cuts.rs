//! The saving of every `#include` directive ("cuts"), in one analysis over the scan's per-TU
//! include graphs: for each directive of the project, the Total Parsed lines saved if it were
//! removed (the line blanked or commented out, so line counts stay), and for each project
//! header, the lines saved if it were empty.
//!
//! Per translation unit, on the graph of the include edges that TU took (its preprocessed
//! edges; in "all branches" mode the union graph restricted to its closure), a file and
//! everything only it pulls in leave the TU exactly when no other inclusion path reaches it:
//! with the TU's dominator tree, removing the edge A → B drops B's dominator subtree iff A is
//! B's only predecessor that B does not itself dominate; emptying B drops B's subtree (B's own
//! lines included, the file stays, empty). Summed over TUs, that is every directive's saving in
//! time linear in the edges (Cooper–Harvey–Kennedy dominators per TU).
//!
//! In "preprocessed" mode this keeps each TU's other edges as they were: when the removed files
//! define macros that other files of the TU test in `#if`s, the real figure may differ (flag
//! `macros_tested_later`); when the includer includes the same file on another line too, only
//! the first active line is known per TU (flag `other_directives`). The scan then re-evaluates
//! the affected translation units of the top cuts with the directive removed (module `eval`'s
//! `Skip`), and those figures are the preprocessor's (`exact: true`).

use super::Mode;
use super::report::Report;
pub use super::report::{Cut, CutKind};
use super::util::{FxMap, FxSet, Sym};
use rayon::prelude::*;

/// Per node: the macros its directives define or undefine, and those its conditionals (and
/// `#include MACRO`) name; both sorted. Empty in "all branches" mode.
#[derive(Default)]
pub(crate) struct MacroUse {
    pub defs: Vec<Vec<Sym>>,
    pub tests: Vec<Vec<Sym>>,
}

#[derive(Default)]
struct Acc {
    lines: u64,
    /// (TU node, configuration).
    tus: Vec<(u32, u32)>,
    flagged: bool,
}

/// Per-thread state of the analysis: reusable buffers and the accumulated savings.
#[derive(Default)]
struct Work {
    local: Vec<u32>,
    inc: FxMap<(u32, u32, u32), Acc>,
    empty: FxMap<u32, Acc>,
}

const NONE: u32 = u32::MAX;

/// Every directive's and every header's estimated saving over the report's TUs, best first.
/// `multi`: (includer, included) node pairs with more than one directive line; `uses`: macro
/// definitions and tests per node (for the `macros_tested_later` flag).
pub(crate) fn estimate(report: &Report, multi: &FxSet<(u32, u32)>, uses: &MacroUse) -> Vec<Cut> {
    let weight: Vec<u64> = report
        .graph
        .nodes
        .iter()
        .map(|x| {
            if x.counted || x.is_tu {
                x.lines as u64
            } else {
                0
            }
        })
        .collect();
    estimate_weighted(report, multi, uses, &weight)
}

/// The same analysis with another weight per node than its counted lines: `lines_saved` is
/// then the saving in that unit (module `timing` passes each file's measured cost in
/// microseconds, system headers included, to rank the cuts by seconds).
pub(crate) fn estimate_weighted(
    report: &Report,
    multi: &FxSet<(u32, u32)>,
    uses: &MacroUse,
    weight: &[u64],
) -> Vec<Cut> {
    let g = &report.graph;
    let n = g.nodes.len();
    let weight = weight.to_vec();
    let editable: Vec<bool> = g.nodes.iter().map(|x| x.counted || x.is_tu).collect();
    let all_branches = report.mode == Mode::AllBranches;
    let merged = g
        .tus
        .par_iter()
        .fold(
            || Work {
                local: vec![NONE; n],
                ..Default::default()
            },
            |mut w, t| {
                tu_savings(report, t, &weight, &editable, uses, &mut w);
                w
            },
        )
        .map(|w| (w.inc, w.empty))
        .reduce(
            || (FxMap::default(), FxMap::default()),
            |mut a, b| {
                for (k, v) in b.0 {
                    let e = a.0.entry(k).or_default();
                    merge(e, v);
                }
                for (k, v) in b.1 {
                    let e = a.1.entry(k).or_default();
                    merge(e, v);
                }
                a
            },
        );
    let name = |i: u32| g.nodes[i as usize].path.clone();
    let mut cuts: Vec<Cut> = Vec::new();
    for ((a, l, b), acc) in merged.0 {
        let other = multi.contains(&(a, b));
        // In "all branches" every line is taken: the other directive still includes the file.
        if (other && all_branches) || acc.lines == 0 {
            continue;
        }
        cuts.push(
            Cut {
                kind: CutKind::Include,
                includer: name(a),
                line: l,
                included: name(b),
                lines_saved: acc.lines as i64,
                tus_affected: acc.tus.len() as u32,
                exact: all_branches,
                macros_tested_later: acc.flagged,
                other_directives: other,
                seconds_saved: None,
                from: a,
                to: b,
                tus: Vec::new(),
                tu_configs: Vec::new(),
            }
            .with_tus(acc.tus),
        );
    }
    for (h, acc) in merged.1 {
        if acc.lines == 0 {
            continue;
        }
        cuts.push(
            Cut {
                kind: CutKind::EmptyHeader,
                includer: String::new(),
                line: 0,
                included: name(h),
                lines_saved: acc.lines as i64,
                tus_affected: acc.tus.len() as u32,
                exact: all_branches,
                macros_tested_later: acc.flagged,
                other_directives: false,
                seconds_saved: None,
                from: h,
                to: h,
                tus: Vec::new(),
                tu_configs: Vec::new(),
            }
            .with_tus(acc.tus),
        );
    }
    sort_cuts(&mut cuts);
    cuts
}

impl Cut {
    /// Sets `tus` and `tu_configs` from (TU node, configuration) pairs, sorted.
    pub(crate) fn with_tus(mut self, mut v: Vec<(u32, u32)>) -> Cut {
        v.sort_unstable();
        (self.tus, self.tu_configs) = v.into_iter().unzip();
        self
    }
}

fn merge(e: &mut Acc, v: Acc) {
    e.lines += v.lines;
    e.flagged |= v.flagged;
    e.tus.extend(v.tus);
}

/// Best first: lines saved, then directives before whole headers, then by name and line.
pub(crate) fn sort_cuts(cuts: &mut [Cut]) {
    cuts.sort_by(|a, b| {
        b.lines_saved
            .cmp(&a.lines_saved)
            .then_with(|| (a.kind == CutKind::EmptyHeader).cmp(&(b.kind == CutKind::EmptyHeader)))
            .then_with(|| a.includer.cmp(&b.includer))
            .then_with(|| a.line.cmp(&b.line))
            .then_with(|| a.included.cmp(&b.included))
    });
}

/// One TU's contribution: its graph, dominator tree, and the savings it implies.
fn tu_savings(
    report: &Report,
    t: &super::report::TuReach,
    weight: &[u64],
    editable: &[bool],
    uses: &MacroUse,
    w: &mut Work,
) {
    let g = &report.graph;
    if t.closure.is_empty() {
        return;
    }
    let (order, edges) = local_graph(report, t, w);
    let k = order.len();
    let outs = Csr::new(&edges, k, |e| e.0);
    let ins = Csr::new(&edges, k, |e| e.1);
    let (post, rpo, visited) = reverse_postorder(&edges, &outs);
    let idom = dominators(&edges, &ins, &post, &rpo);
    let dom = DomTree::new(&idom, &visited, |v| weight[order[v] as usize]);
    // Macro tests per TU, for the flag: how many files of the closure test each macro.
    let with_macros = !uses.tests.is_empty();
    let mut tested: FxMap<Sym, u32> = FxMap::default();
    if with_macros {
        for &v in &order {
            for &s in &uses.tests[v as usize] {
                *tested.entry(s).or_default() += 1;
            }
        }
    }
    let leaks = |b: usize| dom.leaks(b, &order, uses, &tested);
    let tu = (t.node, t.config);
    for b in 1..k {
        if !visited[b] || dom.sub[b] == 0 {
            continue;
        }
        let bn = order[b];
        let flagged_empty = with_macros && w.empty.get(&bn).is_none_or(|a| !a.flagged);
        let mut leak = None;
        if editable[bn as usize] && !g.nodes[bn as usize].is_tu {
            let e = w.empty.entry(bn).or_default();
            e.lines += dom.sub[b];
            e.tus.push(tu);
            if flagged_empty {
                let l = leaks(b);
                leak = Some(l);
                e.flagged |= l;
            }
        }
        // The one entry into b's subtree, if there is exactly one.
        let mut entry = None;
        let mut count = 0;
        for &ei in ins.of(b) {
            let p = edges[ei as usize].0 as usize;
            if visited[p] && !dom.dominates(b, p) {
                count += 1;
                entry = Some(ei);
            }
        }
        if count != 1 {
            continue;
        }
        let (a, _, line) = edges[entry.unwrap() as usize];
        let an = order[a as usize];
        if !editable[an as usize] || line == 0 {
            continue;
        }
        let e = w.inc.entry((an, line, bn)).or_default();
        e.lines += dom.sub[b];
        e.tus.push(tu);
        if with_macros && !e.flagged {
            e.flagged = leak.unwrap_or_else(|| leaks(b));
        }
    }
}

/// A TU's closure in local numbering (the TU first): the report node of each local node, and
/// the edges between them as (from, to, line).
fn local_graph(
    report: &Report,
    t: &super::report::TuReach,
    w: &mut Work,
) -> (Vec<u32>, Vec<(u32, u32, u32)>) {
    let g = &report.graph;
    let nodes: &[u32] = &t.closure;
    let mut order: Vec<u32> = Vec::with_capacity(nodes.len());
    order.push(t.node);
    w.local[t.node as usize] = 0;
    for &v in nodes {
        if w.local[v as usize] == NONE {
            w.local[v as usize] = order.len() as u32;
            order.push(v);
        }
    }
    // Edges in local space: (from, to, line).
    let mut edges: Vec<(u32, u32, u32)> = Vec::new();
    match &t.edges {
        Some(ids) => {
            for &i in ids.iter() {
                if let Some(&(a, l, b)) = g.edge_tab.get(i as usize)
                    && a != NONE
                {
                    let (la, lb) = (w.local[a as usize], w.local[b as usize]);
                    if la != NONE && lb != NONE && la != lb {
                        edges.push((la, lb, l));
                    }
                }
            }
        }
        None => {
            for (la, &v) in order.iter().enumerate() {
                for &(b, l) in &g.out[v as usize] {
                    let lb = w.local[b as usize];
                    if lb != NONE && lb as usize != la {
                        edges.push((la as u32, lb, l));
                    }
                }
            }
        }
    }
    for &v in &order {
        w.local[v as usize] = NONE;
    }
    (order, edges)
}

/// Compressed adjacency: the indices of the edges leaving (or entering) each node.
struct Csr {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Csr {
    /// `key`: the node an edge is listed under (its source for successors, its target for
    /// predecessors); `k` nodes.
    fn new(edges: &[(u32, u32, u32)], k: usize, key: fn(&(u32, u32, u32)) -> u32) -> Csr {
        let mut start = vec![0u32; k + 1];
        for e in edges {
            start[key(e) as usize + 1] += 1;
        }
        for i in 0..k {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; edges.len()];
        for (i, e) in edges.iter().enumerate() {
            let s = &mut fill[key(e) as usize];
            list[*s as usize] = i as u32;
            *s += 1;
        }
        Csr { start, list }
    }

    fn of(&self, v: usize) -> &[u32] {
        &self.list[self.start[v] as usize..self.start[v + 1] as usize]
    }
}

/// Reverse postorder from node 0, the TU (iterative DFS): each node's postorder number, the
/// order, and which nodes were reached.
fn reverse_postorder(edges: &[(u32, u32, u32)], outs: &Csr) -> (Vec<u32>, Vec<u32>, Vec<bool>) {
    let k = outs.start.len() - 1;
    let out_start = &outs.start;
    let mut post = vec![NONE; k];
    let mut rpo: Vec<u32> = Vec::with_capacity(k);
    let mut visited = vec![false; k];
    let mut stack: Vec<(u32, u32)> = vec![(0, out_start[0])];
    visited[0] = true;
    while let Some(&mut (v, ref mut next)) = stack.last_mut() {
        if *next < out_start[v as usize + 1] {
            let to = edges[outs.list[*next as usize] as usize].1;
            *next += 1;
            if !visited[to as usize] {
                visited[to as usize] = true;
                stack.push((to, out_start[to as usize]));
            }
        } else {
            post[v as usize] = rpo.len() as u32;
            rpo.push(v);
            stack.pop();
        }
    }
    rpo.reverse();
    (post, rpo, visited)
}

/// Each node's immediate dominator (`NONE` where unreached). Cooper, Harvey, Kennedy: "A
/// Simple, Fast Dominance Algorithm".
fn dominators(edges: &[(u32, u32, u32)], ins: &Csr, post: &[u32], rpo: &[u32]) -> Vec<u32> {
    let mut idom = vec![NONE; post.len()];
    idom[0] = 0;
    let intersect = |idom: &[u32], mut a: u32, mut b: u32| {
        while a != b {
            while post[a as usize] < post[b as usize] {
                a = idom[a as usize];
            }
            while post[b as usize] < post[a as usize] {
                b = idom[b as usize];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &v in rpo.iter().skip(1) {
            let mut new = NONE;
            for &ei in ins.of(v as usize) {
                let p = edges[ei as usize].0;
                if idom[p as usize] == NONE {
                    continue;
                }
                new = if new == NONE {
                    p
                } else {
                    intersect(&idom, p, new)
                };
            }
            if new != NONE && idom[v as usize] != new {
                idom[v as usize] = new;
                changed = true;
            }
        }
    }
    idom
}

/// The dominator tree: preorder numbers, subtree sizes and subtree weights.
struct DomTree {
    pre: Vec<u32>,
    size: Vec<u32>,
    /// The weight of each node's subtree (the lines a cut above it saves).
    sub: Vec<u64>,
    by_pre: Vec<u32>,
}

impl DomTree {
    fn new(idom: &[u32], visited: &[bool], weight: impl Fn(usize) -> u64) -> DomTree {
        let k = idom.len();
        let mut kids_start = vec![0u32; k + 1];
        for v in 1..k {
            if visited[v] {
                kids_start[idom[v] as usize + 1] += 1;
            }
        }
        for i in 0..k {
            kids_start[i + 1] += kids_start[i];
        }
        let mut fill = kids_start.clone();
        let mut kids = vec![0u32; kids_start[k] as usize];
        for v in 1..k {
            if visited[v] {
                let s = &mut fill[idom[v] as usize];
                kids[*s as usize] = v as u32;
                *s += 1;
            }
        }
        let mut pre = vec![NONE; k];
        let mut size = vec![1u32; k];
        let mut sub = vec![0u64; k];
        let mut by_pre: Vec<u32> = Vec::with_capacity(k);
        let mut st: Vec<(u32, bool)> = vec![(0, false)];
        while let Some((v, done)) = st.pop() {
            let vi = v as usize;
            if done {
                sub[vi] += weight(vi);
                if v != 0 {
                    let p = idom[vi] as usize;
                    size[p] += size[vi];
                    sub[p] += sub[vi];
                }
                continue;
            }
            pre[vi] = by_pre.len() as u32;
            by_pre.push(v);
            st.push((v, true));
            for &c in &kids[kids_start[vi] as usize..kids_start[vi + 1] as usize] {
                st.push((c, false));
            }
        }
        DomTree {
            pre,
            size,
            sub,
            by_pre,
        }
    }

    fn dominates(&self, a: usize, b: usize) -> bool {
        self.pre[a] <= self.pre[b] && self.pre[b] < self.pre[a] + self.size[a]
    }

    /// Does the subtree of `b` define a macro a file outside it tests? `tested`: per macro, how
    /// many files of the TU test it; `order`: the report node of each local node.
    fn leaks(&self, b: usize, order: &[u32], uses: &MacroUse, tested: &FxMap<Sym, u32>) -> bool {
        let range = &self.by_pre[self.pre[b] as usize..(self.pre[b] + self.size[b]) as usize];
        // The macros the subtree defines that some file of the TU tests...
        let mut defined: FxMap<Sym, u32> = FxMap::default();
        for &f in range {
            for &s in &uses.defs[order[f as usize] as usize] {
                if tested.contains_key(&s) {
                    defined.insert(s, 0);
                }
            }
        }
        if defined.is_empty() {
            return false;
        }
        // ...tested by a file outside it.
        for &f in range {
            for s in &uses.tests[order[f as usize] as usize] {
                if let Some(c) = defined.get_mut(s) {
                    *c += 1;
                }
            }
        }
        defined.iter().any(|(s, &inside)| tested[s] > inside)
    }
}

/// Formats `n` with thousands separators (`12,345,678`).
pub fn thousands(n: i64) -> String {
    let s = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
