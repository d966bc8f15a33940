//! Every occurrence of every keyword, ASCII case-insensitively: a dense Aho-Corasick DFA of
//! our own rather than `aho_corasick`'s, for two reasons measured on 1,250 keywords. Case is
//! folded in the byte-class table, so `A` and `a` share a column and a state's row is half
//! as wide (the `aho_corasick` DFA gives each case its own class); and the search walks
//! [`LANES`] parts of the input in one loop, so that many independent table loads are in
//! flight at a time: a DFA walk waits on memory, one load after the other, and the table
//! (0.9 MB for the built-in set) is larger than a core's L1 and shares its L2. Walking one
//! part at a time is no faster than `aho_corasick`; two parts cut a directory scan's CPU by
//! ~20 %, four by ~25 %, six in a loop of their own (`walk_rows`) by another ~10 %.

use std::borrow::Cow;

/// No state: a trie edge not built yet.
const NONE: u32 = u32::MAX;
/// The first word of a serialized automaton ([`Keywords::to_bytes`]): "LHK2" (the second
/// layout: a table of 16-bit entries).
const MAGIC: u32 = u32::from_le_bytes(*b"LHK2");
/// Parts of the input walked together: six hide more of each table read's latency than four
/// (1,120 MB/s against 870 over the generated corpus); eight no longer fit the registers.
const LANES: usize = 6;
/// Bytes of each part walked before its hits are reported.
const BLOCK: usize = 4096;

pub(super) struct Keywords {
    /// Byte to column; a byte in no keyword is column 0. Upper and lower case share one.
    classes: [u8; 256],
    /// log2 of the row width.
    stride2: u32,
    /// `trans[(state << stride2) + class]`: the next state's number shifted left by one,
    /// with bit 0 set when some keyword ends there. Sixteen bits, not a premultiplied 32: the
    /// built-in set's table is then 0.9 MB, not 1.9, and shares a core's 2 MB L2 with the
    /// input and the regexes' caches. Borrowed when the automaton is the one `build.rs`
    /// embedded for the built-in rules ([`Keywords::embedded`]).
    trans: Cow<'static, [u16]>,
    /// The keywords ending in state `s >> stride2`: `out[out_at[s]..out_at[s + 1]]`.
    out_at: Cow<'static, [u32]>,
    out: Cow<'static, [u32]>,
    /// Length of each keyword.
    lens: Cow<'static, [u32]>,
    longest: usize,
}

impl Keywords {
    /// `keywords` are matched ASCII case-insensitively; each must be non-empty. `None` when
    /// the states would not fit the table's 15 bits, or their rows' offsets 32 (tens of
    /// thousands of keywords): the caller then takes `aho_corasick`.
    pub(super) fn new(keywords: &[String]) -> Option<Keywords> {
        let mut present = [false; 256];
        for k in keywords {
            for &b in k.as_bytes() {
                present[b.to_ascii_lowercase() as usize] = true;
            }
        }
        let mut classes = [0u8; 256];
        let mut n = 1usize;
        for b in 0..256usize {
            if present[b] {
                classes[b] = n as u8;
                n += 1;
            }
        }
        for b in 0..256usize {
            let l = (b as u8).to_ascii_lowercase() as usize;
            if l != b {
                classes[b] = classes[l];
            }
        }
        // Column 0 collects every byte in no keyword. Keywords are UTF-8, so at most 218 distinct
        // bytes once case is folded: the classes fit a u8.
        // At least two: a table entry's bit 0 is its flag, so a row's offset is even.
        let stride = n.next_power_of_two().max(2);
        let stride2 = stride.trailing_zeros();
        // The trie, in rows of `stride` edges; state 0 is the root.
        let mut goto: Vec<u32> = vec![NONE; stride];
        let mut outs: Vec<Vec<u32>> = vec![Vec::new()];
        // Each state's depth: the length of the keyword prefix it stands for.
        let mut depth: Vec<usize> = vec![0];
        for (id, k) in keywords.iter().enumerate() {
            let mut s = 0usize;
            for &b in k.as_bytes() {
                let c = classes[b as usize] as usize;
                let next = goto[s * stride + c];
                s = if next == NONE {
                    let t = outs.len();
                    goto[s * stride + c] = t as u32;
                    goto.extend(std::iter::repeat_n(NONE, stride));
                    outs.push(Vec::new());
                    depth.push(depth[s] + 1);
                    t
                } else {
                    next as usize
                };
            }
            outs[s].push(id as u32);
        }
        if outs.len() > 1 << 15 || (outs.len() as u64) << (stride2 + 1) > u64::from(u32::MAX) {
            return None;
        }
        // Breadth first, each state's missing edges are its failure state's edges: that
        // state is shallower, so already complete.
        let states = outs.len();
        let mut fail = vec![0usize; states];
        let mut queue = std::collections::VecDeque::new();
        for edge in goto.iter_mut().take(stride) {
            match *edge {
                NONE => *edge = 0,
                t => queue.push_back(t as usize),
            }
        }
        while let Some(s) = queue.pop_front() {
            let inherited = outs[fail[s]].clone();
            outs[s].extend(inherited);
            for c in 0..stride {
                let t = goto[s * stride + c];
                let via_fail = goto[fail[s] * stride + c];
                if t == NONE {
                    goto[s * stride + c] = via_fail;
                } else {
                    fail[t as usize] = via_fail as usize;
                    queue.push_back(t as usize);
                }
            }
        }
        // Rows in order of depth, the root first: the shallow states, where a walk spends
        // most of its steps, then share cache lines and pages rather than lie spread over
        // the table in the order their keywords were added (the walk: +3.5 %).
        let mut order: Vec<usize> = (0..states).collect();
        order.sort_by_key(|&s| depth[s]);
        let mut renamed = vec![0u32; states];
        for (new, &old) in order.iter().enumerate() {
            renamed[old] = new as u32;
        }
        let outs: Vec<Vec<u32>> = order
            .iter()
            .map(|&s| std::mem::take(&mut outs[s]))
            .collect();
        let trans = order
            .iter()
            .flat_map(|&s| &goto[s * stride..(s + 1) * stride])
            .map(|&t| {
                let t = renamed[t as usize];
                (t as u16) << 1 | u16::from(!outs[t as usize].is_empty())
            })
            .collect();
        let mut out_at = Vec::with_capacity(states + 1);
        let mut out = Vec::new();
        for o in &outs {
            out_at.push(out.len() as u32);
            out.extend_from_slice(o);
        }
        out_at.push(out.len() as u32);
        Some(Keywords {
            classes,
            stride2,
            trans: Cow::Owned(trans),
            out_at: Cow::Owned(out_at),
            out: Cow::Owned(out),
            lens: Cow::Owned(keywords.iter().map(|k| k.len() as u32).collect()),
            longest: keywords.iter().map(|k| k.len()).max().unwrap_or(0),
        })
    }

    /// The automaton for `keywords`, serialized for `build.rs` to embed (little-endian
    /// words): a header ([`MAGIC`], `stride2`, `longest`, the lengths of the four tables and
    /// of the keywords' bytes), the class table, the four tables (the transitions two to a
    /// word: rows are of an even width), then the keywords themselves (so that a reader can
    /// tell which keywords it was built for), padded to a word.
    #[allow(dead_code)] // build.rs and the tests only
    pub(super) fn to_bytes(&self, keywords: &[String]) -> Vec<u8> {
        let text: Vec<u8> = keywords.iter().flat_map(|k| k.bytes()).collect();
        let mut words = vec![
            MAGIC,
            self.stride2,
            self.longest as u32,
            self.trans.len() as u32,
            self.out_at.len() as u32,
            self.out.len() as u32,
            self.lens.len() as u32,
            text.len() as u32,
        ];
        words.extend(
            self.classes
                .chunks(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
        words.extend(
            self.trans
                .chunks(2)
                .map(|p| u32::from(p[0]) | u32::from(p[1]) << 16),
        );
        for table in [&self.out_at, &self.out, &self.lens] {
            words.extend_from_slice(table);
        }
        let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        bytes.extend_from_slice(&text);
        bytes.resize(bytes.len().next_multiple_of(4), 0);
        bytes
    }

    /// The automaton [`Keywords::to_bytes`] wrote into `blob` (which must be 4-aligned),
    /// borrowed rather than copied, if it was built for exactly `keywords` (in this order):
    /// a start then builds no automaton and pages in only the rows a search reaches. `None`
    /// for any other keyword list, a malformed blob, or a big-endian target.
    #[allow(dead_code)] // the crate only
    pub(super) fn embedded(blob: &'static [u8], keywords: &[String]) -> Option<Keywords> {
        if cfg!(target_endian = "big") {
            return None;
        }
        // SAFETY: every bit pattern is a valid u32; `align_to` puts in `words` only what is
        // aligned, and the blob is rejected unless that is all of it.
        let (pre, words, _) = unsafe { blob.align_to::<u32>() };
        if !pre.is_empty() || words.len() < 8 + 64 || words[0] != MAGIC {
            return None;
        }
        let (stride2, longest) = (words[1], words[2] as usize);
        if !(1..=8).contains(&stride2) {
            return None;
        }
        let lens: Vec<usize> = words[3..8].iter().map(|&n| n as usize).collect();
        let mut classes = [0u8; 256];
        for (i, w) in words[8..72].iter().enumerate() {
            classes[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        let mut at = 72;
        let mut table = |n: usize| -> Option<&'static [u32]> {
            let t = words.get(at..at + n)?;
            at += n;
            Some(t)
        };
        // SAFETY: a u16 is aligned wherever a u32 is, and every bit pattern is valid.
        let (_, trans, _) = unsafe { table(lens[0].div_ceil(2))?.align_to::<u16>() };
        let trans = trans.get(..lens[0])?;
        // What the walk's unchecked reads rely on: whole rows, every entry naming one of them,
        // every class inside a row. The largest entry by a fold with no early exit, which the
        // compiler makes a vector loop: a hook pays this at every start (~0.9 MB read).
        let stride = 1usize << stride2;
        let rows = trans.len() >> stride2;
        let largest = trans.iter().fold(0, |m, &e| m.max(e));
        if trans.len() % stride != 0
            || usize::from(largest >> 1) >= rows
            || classes.iter().any(|&c| usize::from(c) >= stride)
        {
            return None;
        }
        let out_at = table(lens[1])?;
        let out = table(lens[2])?;
        let klens = table(lens[3])?;
        let text = blob.get(4 * at..4 * at + lens[4])?;
        // The keywords it was built for, compared one by one with the ones asked for.
        if klens.len() != keywords.len() {
            return None;
        }
        let mut pos = 0;
        for (k, &n) in keywords.iter().zip(klens) {
            let n = n as usize;
            if text.get(pos..pos + n)? != k.as_bytes() {
                return None;
            }
            pos += n;
        }
        if pos != text.len() {
            return None;
        }
        Some(Keywords {
            classes,
            stride2,
            trans: Cow::Borrowed(trans),
            out_at: Cow::Borrowed(out_at),
            out: Cow::Borrowed(out),
            lens: Cow::Borrowed(klens),
            longest,
        })
    }

    /// Calls `f(keyword, start, end)` for every occurrence of a keyword in `hay[range]` (the
    /// haystack is cut to `range`: nothing outside it is looked at), in no particular order.
    pub(super) fn for_each(
        &self,
        hay: &[u8],
        range: std::ops::Range<usize>,
        f: &mut impl FnMut(usize, usize, usize),
    ) {
        let (from, to) = (range.start, range.end.min(hay.len()));
        if from >= to {
            return;
        }
        // Below this the extra walks are not worth their set-up.
        const SPLIT_AT: usize = 256;
        if to - from < SPLIT_AT || self.longest == 0 {
            self.resume(hay, 0, from, to, usize::MAX, f);
            return;
        }
        self.lanes::<LANES>(hay, from, to, f);
    }

    /// [`Keywords::for_each`] over `N` parts of `hay[from..to]` walked in one loop. Part `j`
    /// reports what starts in it, reading on until every such keyword has ended; each part
    /// but the first starts fresh at its own start, so it sees all that starts there.
    fn lanes<const N: usize>(
        &self,
        hay: &[u8],
        from: usize,
        to: usize,
        f: &mut impl FnMut(usize, usize, usize),
    ) {
        let part = (to - from) / N;
        let starts: [usize; N] = std::array::from_fn(|j| from + j * part);
        let befores: [usize; N] =
            std::array::from_fn(|j| if j + 1 < N { starts[j + 1] } else { usize::MAX });
        let ends: [usize; N] = std::array::from_fn(|j| {
            if j + 1 < N {
                (starts[j + 1] + self.longest - 1).min(to)
            } else {
                to
            }
        });
        let both = (0..N).map(|j| ends[j] - starts[j]).min().unwrap_or(0);
        let mut s = [0u32; N];
        // The walk writes its hits down and they are reported after each block: with the
        // caller's closure inlined into the loop, the states no longer fit the registers and
        // went through the stack at every byte.
        let mut hits = Vec::with_capacity(BLOCK);
        let mut at = 0;
        while at < both {
            let n = (both - at).min(BLOCK);
            hits.clear();
            self.walk(&hay[from + at..], part, n, &mut s, &mut hits);
            for &(j, i, state) in &hits {
                let j = j as usize;
                self.report(state, starts[j] + at + i as usize + 1, befores[j], f);
            }
            at += n;
        }
        for j in 0..N {
            self.resume(hay, s[j], starts[j] + both, ends[j], befores[j], f);
        }
    }

    /// Walks `N` parts of `n` bytes together from states `s`, part `j` being
    /// `hay[j * part..][..n]`, writing down each lane, offset and state where some keyword
    /// ends.
    fn walk<const N: usize>(
        &self,
        hay: &[u8],
        part: usize,
        n: usize,
        s: &mut [u32; N],
        hits: &mut Vec<(u32, u32, u32)>,
    ) {
        // The row width a constant of the loop: a shift by a register ties up `cl`, one
        // register of the few the loop has (see `walk_rows`).
        match self.stride2 {
            1 => self.walk_rows::<N, 0>(hay, part, n, s, hits),
            2 => self.walk_rows::<N, 1>(hay, part, n, s, hits),
            3 => self.walk_rows::<N, 2>(hay, part, n, s, hits),
            4 => self.walk_rows::<N, 3>(hay, part, n, s, hits),
            5 => self.walk_rows::<N, 4>(hay, part, n, s, hits),
            6 => self.walk_rows::<N, 5>(hay, part, n, s, hits),
            7 => self.walk_rows::<N, 6>(hay, part, n, s, hits),
            8 => self.walk_rows::<N, 7>(hay, part, n, s, hits),
            // `new` makes rows of 2 to 256 entries and `embedded` accepts no other.
            _ => unreachable!("a keyword table's rows are 2 to 256 entries wide"),
        }
    }

    /// [`Keywords::walk`] for rows of `2 << SHIFT` entries. Kept out of line so that its loop
    /// has the registers to itself: the `N` states must stay in registers, for a state
    /// spilled to the stack adds a store and a load to the chain of dependent loads that is
    /// the walk's cost. So the parts are read at one pointer and multiples of `part` (not
    /// through `N` pointers), the class table is copied to the stack (read at the stack
    /// pointer, not a register of its own), and the lanes' flags are gathered in one word as
    /// they are read.
    #[inline(never)]
    fn walk_rows<const N: usize, const SHIFT: u32>(
        &self,
        hay: &[u8],
        part: usize,
        n: usize,
        s: &mut [u32; N],
        hits: &mut Vec<(u32, u32, u32)>,
    ) {
        assert!(n <= u32::MAX as usize && (N - 1) * part + n <= hay.len());
        #[cfg(target_arch = "x86_64")]
        if let Ok(six) = <&mut [u32; 6]>::try_from(&mut s[..]) {
            return self.walk_six::<SHIFT>(hay, part, n, six, hits);
        }
        let trans: &[u16] = &self.trans;
        let classes = self.classes;
        let mut st = *s;
        let at = hay.as_ptr();
        for i in 0..n {
            // Bit `j` set when lane `j`'s step ended some keyword.
            let mut ended = 0u32;
            for j in 0..N {
                // SAFETY: `j * part + i < (N - 1) * part + n <= hay.len()` (asserted above).
                // A state is a row's offset (the caller starts at the root, 0, and passes back
                // only states this loop made) and a class is below the row's width, so their
                // sum indexes the table: [`Keywords::new`] builds only such entries and
                // classes, and [`Keywords::embedded`] accepts only such tables.
                let e = unsafe {
                    let c = classes[usize::from(*at.add(j * part + i))];
                    *trans.get_unchecked((st[j] + u32::from(c)) as usize)
                };
                ended |= u32::from(e & 1) << j;
                st[j] = u32::from(e & !1) << SHIFT;
            }
            if ended != 0 {
                for (j, &state) in st.iter().enumerate() {
                    if ended >> j & 1 != 0 {
                        hits.push((j as u32, i as u32, state));
                    }
                }
            }
        }
        *s = st;
    }

    /// [`Keywords::walk_rows`] for six lanes, its loop written out in assembly: the compiler's
    /// loop took ten instructions a lane's step and reloaded two pointers from the stack at
    /// every byte, as the states, the lanes' pointers and the tables used every register.
    /// Here it is six and one branch: the byte, its class, the sum, the entry, a test of its
    /// flag, the shift.
    /// The thirteen registers hold the six states, the two tables, the lanes (at `p`, `p +
    /// part`, `p + 2 part`, then `q = p + 3 part` and on), the end and a scratch; an entry
    /// whose flag is set leaves the loop, and the rest of that step is taken here.
    #[cfg(target_arch = "x86_64")]
    fn walk_six<const SHIFT: u32>(
        &self,
        hay: &[u8],
        part: usize,
        n: usize,
        s: &mut [u32; 6],
        hits: &mut Vec<(u32, u32, u32)>,
    ) {
        let [mut s0, mut s1, mut s2, mut s3, mut s4, mut s5] = *s;
        let end = hay[n..].as_ptr();
        let mut i = 0;
        while i < n {
            let mut p = hay[i..].as_ptr();
            let lane: usize;
            // SAFETY: the loop reads `hay[j * part + k]` for lanes `j` of 0..6 and `k` from
            // `i` while below `n`: inside `hay`, as `walk_rows` asserted `5 * part + n <=
            // hay.len()`. An entry is read at a state (a row's offset: the caller passes back
            // only states this walk made, from the root) plus a class (below the row's width),
            // inside the table as `Keywords::new` and `Keywords::embedded` make it. Only the
            // named registers are written; no stack, no flags kept.
            unsafe {
                std::arch::asm!(
                    "lea {q}, [{p} + 2*{u}]",
                    "add {q}, {u}",
                    "cmp {p}, {end}",
                    "jae 7f",
                    "2:",
                    "movzx {t:e}, byte ptr [{p}]",
                    "movzx {t:e}, byte ptr [{cls} + {t}]",
                    "add {t:e}, {s0:e}",
                    "movzx {s0:e}, word ptr [{tr} + 2*{t}]",
                    "test {s0:e}, 1",
                    "jnz 20f",
                    "shl {s0:e}, {sh}",
                    "movzx {t:e}, byte ptr [{p} + {u}]",
                    "movzx {t:e}, byte ptr [{cls} + {t}]",
                    "add {t:e}, {s1:e}",
                    "movzx {s1:e}, word ptr [{tr} + 2*{t}]",
                    "test {s1:e}, 1",
                    "jnz 21f",
                    "shl {s1:e}, {sh}",
                    "movzx {t:e}, byte ptr [{p} + 2*{u}]",
                    "movzx {t:e}, byte ptr [{cls} + {t}]",
                    "add {t:e}, {s2:e}",
                    "movzx {s2:e}, word ptr [{tr} + 2*{t}]",
                    "test {s2:e}, 1",
                    "jnz 22f",
                    "shl {s2:e}, {sh}",
                    "movzx {t:e}, byte ptr [{q}]",
                    "movzx {t:e}, byte ptr [{cls} + {t}]",
                    "add {t:e}, {s3:e}",
                    "movzx {s3:e}, word ptr [{tr} + 2*{t}]",
                    "test {s3:e}, 1",
                    "jnz 23f",
                    "shl {s3:e}, {sh}",
                    "movzx {t:e}, byte ptr [{q} + {u}]",
                    "movzx {t:e}, byte ptr [{cls} + {t}]",
                    "add {t:e}, {s4:e}",
                    "movzx {s4:e}, word ptr [{tr} + 2*{t}]",
                    "test {s4:e}, 1",
                    "jnz 24f",
                    "shl {s4:e}, {sh}",
                    "movzx {t:e}, byte ptr [{q} + 2*{u}]",
                    "movzx {t:e}, byte ptr [{cls} + {t}]",
                    "add {t:e}, {s5:e}",
                    "movzx {s5:e}, word ptr [{tr} + 2*{t}]",
                    "test {s5:e}, 1",
                    "jnz 25f",
                    "shl {s5:e}, {sh}",
                    "inc {p}",
                    "inc {q}",
                    "cmp {p}, {end}",
                    "jb 2b",
                    "7:",
                    "mov {t:e}, 6",
                    "jmp 9f",
                    "20:",
                    "xor {t:e}, {t:e}",
                    "jmp 9f",
                    "21:",
                    "mov {t:e}, 1",
                    "jmp 9f",
                    "22:",
                    "mov {t:e}, 2",
                    "jmp 9f",
                    "23:",
                    "mov {t:e}, 3",
                    "jmp 9f",
                    "24:",
                    "mov {t:e}, 4",
                    "jmp 9f",
                    "25:",
                    "mov {t:e}, 5",
                    "9:",
                    p = inout(reg) p,
                    q = out(reg) _,
                    u = in(reg) part,
                    end = in(reg) end,
                    cls = in(reg) self.classes.as_ptr(),
                    tr = in(reg) self.trans.as_ptr(),
                    t = out(reg) lane,
                    s0 = inout(reg) s0,
                    s1 = inout(reg) s1,
                    s2 = inout(reg) s2,
                    s3 = inout(reg) s3,
                    s4 = inout(reg) s4,
                    s5 = inout(reg) s5,
                    sh = const SHIFT,
                    options(nostack, readonly, pure),
                );
            }
            if lane == 6 {
                break;
            }
            // Lane `lane` read an entry whose flag is set, at offset `i`; the lanes before it
            // took their step, the ones after it have not.
            i = p as usize - hay.as_ptr() as usize;
            let mut st = [s0, s1, s2, s3, s4, s5];
            for (j, state) in st.iter_mut().enumerate().skip(lane) {
                let e = if j == lane {
                    *state as u16
                } else {
                    self.entry(*state, hay[j * part + i])
                };
                *state = u32::from(e & !1) << SHIFT;
                if e & 1 != 0 {
                    hits.push((j as u32, i as u32, *state));
                }
            }
            [s0, s1, s2, s3, s4, s5] = st;
            i += 1;
        }
        *s = [s0, s1, s2, s3, s4, s5];
    }

    /// Walks `hay[from..to]` from state `s`, reporting keywords that start before `before`.
    fn resume(
        &self,
        hay: &[u8],
        mut s: u32,
        from: usize,
        to: usize,
        before: usize,
        f: &mut impl FnMut(usize, usize, usize),
    ) {
        let shift = self.stride2 - 1;
        for (i, &byte) in hay[from..to].iter().enumerate() {
            let e = self.entry(s, byte);
            s = u32::from(e & !1) << shift;
            if e & 1 != 0 {
                self.report(s, from + i + 1, before, f);
            }
        }
    }

    /// The table's entry for state `s` and byte `b`: the next state, with bit 0 set when some
    /// keyword ends there.
    #[inline]
    fn entry(&self, s: u32, b: u8) -> u16 {
        self.trans[(s + u32::from(self.classes[usize::from(b)])) as usize]
    }

    #[inline]
    fn report(&self, s: u32, end: usize, before: usize, f: &mut impl FnMut(usize, usize, usize)) {
        let row = (s >> self.stride2) as usize;
        let (lo, hi) = (self.out_at[row] as usize, self.out_at[row + 1] as usize);
        for &k in &self.out[lo..hi] {
            let start = end - self.lens[k as usize] as usize;
            if start < before {
                f(k as usize, start, end);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::{AhoCorasick, MatchKind};

    fn reference(
        ac: &AhoCorasick,
        hay: &[u8],
        range: std::ops::Range<usize>,
    ) -> Vec<(usize, usize, usize)> {
        let input = aho_corasick::Input::new(hay).range(range);
        let mut v: Vec<_> = ac
            .find_overlapping_iter(input)
            .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
            .collect();
        v.sort_unstable();
        v
    }

    /// Every row width the walk is built for (2 to 256 entries: one loop each), from keyword
    /// sets over alphabets of 1 to 160 characters, against `aho_corasick` over text in both
    /// cases long enough to be walked in lanes.
    #[test]
    fn every_row_width_finds_what_aho_corasick_finds() {
        // Printable ASCII but the capitals, then two-byte characters: each adds a byte.
        let alphabet: Vec<char> = (' '..='~')
            .filter(|c| !c.is_ascii_uppercase())
            .chain('\u{c0}'..='\u{17f}')
            .collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let mut widths = std::collections::BTreeSet::new();
        for k in [1, 2, 3, 5, 9, 20, 40, 69, 100, 160] {
            let chars = &alphabet[..k];
            let keywords: Vec<String> = (0..400)
                .map(|_| (0..1 + next(5)).map(|_| chars[next(k)]).collect())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let ours = Keywords::new(&keywords).unwrap();
            widths.insert(ours.stride2);
            let text: String = (0..4000)
                .map(|_| {
                    let c = chars[next(k)];
                    if next(2) == 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect();
            let hay = text.as_bytes();
            let ac = AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(&keywords)
                .unwrap();
            for range in [0..hay.len(), 3..hay.len() - 1, 100..1400] {
                let want = reference(&ac, hay, range.clone());
                let mut got = Vec::new();
                ours.for_each(hay, range.clone(), &mut |k, s, e| got.push((k, s, e)));
                got.sort_unstable();
                assert_eq!(got, want, "{k} characters, {range:?}");
                // Four lanes: the loop the compiler writes, which six lanes on x86-64 skip.
                got.clear();
                ours.lanes::<4>(hay, range.start, range.end, &mut |k, s, e| {
                    got.push((k, s, e))
                });
                got.sort_unstable();
                assert_eq!(got, want, "four lanes, {k} characters, {range:?}");
            }
        }
        assert_eq!(
            widths.into_iter().collect::<Vec<_>>(),
            (1..=8).collect::<Vec<_>>()
        );
    }

    #[test]
    fn finds_what_aho_corasick_finds() {
        let rules = crate::rules::builtin();
        let mut keywords: Vec<String> = rules
            .iter()
            .flat_map(|r| r.keywords.iter().map(|k| k.to_ascii_lowercase()))
            .collect();
        keywords.sort();
        keywords.dedup();
        // Every rule's examples, in both cases, and bytes around every keyword.
        let mut hay: Vec<u8> = Vec::new();
        for r in &rules {
            for e in r.examples.iter().chain(&r.negatives) {
                hay.extend_from_slice(e.as_bytes());
                hay.push(b'\n');
                hay.extend_from_slice(e.to_ascii_uppercase().as_bytes());
                hay.push(0xff);
            }
        }
        for k in &keywords {
            hay.extend_from_slice(k.as_bytes());
            hay.extend_from_slice(&k.as_bytes()[..k.len() / 2]);
        }
        let ours = Keywords::new(&keywords).unwrap();
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&keywords)
            .unwrap();
        let n = hay.len();
        // Whole, short (one walk), and lengths around the split so that parts' edges fall
        // inside keywords.
        let mut ranges = vec![0..n, 1..n - 3, 5..200, 17..17, n - 2..n];
        ranges.extend((0..200).map(|i| (i * 997) % (n - 700)..(i * 997) % (n - 700) + 250 + i));
        let mut seen = 0;
        for range in ranges {
            let mut got = Vec::new();
            ours.for_each(&hay, range.clone(), &mut |k, s, e| got.push((k, s, e)));
            got.sort_unstable();
            let want = reference(&ac, &hay, range.clone());
            assert_eq!(got, want, "{range:?}");
            seen += want.len();
        }
        assert!(seen > 10_000, "{seen}");
    }

    /// The walk reads the table unchecked, trusting what `embedded` accepted.
    #[test]
    fn an_embedded_table_leaving_its_rows_is_refused() {
        let words: Vec<String> = ["ghp_", "key=", "sk"].map(String::from).to_vec();
        let bytes = Keywords::new(&words).unwrap().to_bytes(&words);
        let words32: Vec<u32> = bytes
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let blob = |w: &[u32]| -> &'static [u8] {
            let w: &'static [u32] = Box::leak(w.to_vec().into_boxed_slice());
            // SAFETY: a u32 slice read as its bytes.
            unsafe { std::slice::from_raw_parts(w.as_ptr().cast(), 4 * w.len()) }
        };
        assert!(Keywords::embedded(blob(&words32), &words).is_some());
        // The first transitions (after the 8-word header and the class table): to a state
        // past the last row.
        let mut bad = words32.clone();
        bad[72] = u32::MAX;
        assert!(Keywords::embedded(blob(&bad), &words).is_none());
        // A byte's class past a row's width.
        let mut bad = words32;
        bad[8 + usize::from(b'g') / 4] = u32::MAX;
        assert!(Keywords::embedded(blob(&bad), &words).is_none());
    }
}
