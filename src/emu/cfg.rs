//! Control-flow graph helpers shared by the loader ([`super::module`], reconvergence points
//! of the SIMT stack, Panwar et al. §IV-C) and the footprint analysis ([`super::dataflow`],
//! loop exits). Depends on nothing else in the emulator, so both can use it.

/// Immediate post-dominators of a CFG (successor lists), with a virtual exit joined to
/// every block without successors. `None` means the virtual exit. Iterative algorithm of
/// Cooper, Harvey and Kennedy on the reverse CFG.
pub(crate) fn ipdoms(succ: &[Vec<usize>]) -> Vec<Option<usize>> {
    let n = succ.len();
    let exit = n;
    // reverse graph: preds in reverse = succ; we need, for the reverse CFG rooted at exit,
    // the "predecessors" in the reverse graph = successors in the forward graph.
    let mut rsucc: Vec<Vec<usize>> = vec![Vec::new(); n + 1]; // reverse edges: from exit/blocks to preds
    for (b, ss) in succ.iter().enumerate() {
        if ss.is_empty() {
            rsucc[exit].push(b);
        }
        for &s in ss {
            rsucc[s].push(b);
        }
    }
    // Blocks that cannot reach an exit (infinite loops): connect them to exit too.
    // Postorder DFS from exit on the reverse graph.
    let mut order = Vec::with_capacity(n + 1);
    let mut visited = vec![false; n + 1];
    let mut stack: Vec<(usize, usize)> = vec![(exit, 0)];
    visited[exit] = true;
    while let Some(&mut (v, ref mut i)) = stack.last_mut() {
        if *i < rsucc[v].len() {
            let w = rsucc[v][*i];
            *i += 1;
            if !visited[w] {
                visited[w] = true;
                stack.push((w, 0));
            }
        } else {
            order.push(v);
            stack.pop();
        }
    }
    let mut po_num = vec![usize::MAX; n + 1];
    for (i, &v) in order.iter().enumerate() {
        po_num[v] = i;
    }
    let mut idom: Vec<Option<usize>> = vec![None; n + 1];
    idom[exit] = Some(exit);
    // "preds" in the reverse graph of v = forward successors of v (plus exit for sinks)
    let preds = |v: usize| -> Vec<usize> {
        if succ[v].is_empty() {
            vec![exit]
        } else {
            succ[v].clone()
        }
    };
    let intersect = |idom: &Vec<Option<usize>>, mut a: usize, mut b: usize| -> usize {
        while a != b {
            while po_num[a] < po_num[b] {
                a = idom[a].unwrap_or(exit);
            }
            while po_num[b] < po_num[a] {
                b = idom[b].unwrap_or(exit);
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &v in order.iter().rev() {
            if v == exit {
                continue;
            }
            let mut new: Option<usize> = None;
            for p in preds(v) {
                if po_num[p] == usize::MAX || idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(x) => intersect(&idom, p, x),
                });
            }
            if new.is_some() && idom[v] != new {
                idom[v] = new;
                changed = true;
            }
        }
    }
    (0..n)
        .map(|v| match idom[v] {
            Some(x) if x != exit => Some(x),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::ipdoms;

    #[test]
    fn ipdom_of_diamond_and_loop() {
        // 0 -> 1, 2; 1 -> 3; 2 -> 3; 3 -> exit
        let d = ipdoms(&[vec![1, 2], vec![3], vec![3], vec![]]);
        assert_eq!(d, vec![Some(3), Some(3), Some(3), None]);
        // loop: 0 -> 1; 1 -> 2, 3; 2 -> 1; 3 -> exit
        let l = ipdoms(&[vec![1], vec![2, 3], vec![1], vec![]]);
        assert_eq!(l, vec![Some(1), Some(3), Some(1), None]);
        // early return: 0 -> 1, 2; 1 -> exit; 2 -> exit
        let r = ipdoms(&[vec![1, 2], vec![], vec![]]);
        assert_eq!(r, vec![None, None, None]);
        // loop with a break to a different exit: 0->1; 1->2,4; 2->3,4; 3->1; 4->exit
        let b = ipdoms(&[vec![1], vec![2, 4], vec![3, 4], vec![1], vec![]]);
        assert_eq!(b, vec![Some(1), Some(4), Some(4), Some(1), None]);
    }
}
