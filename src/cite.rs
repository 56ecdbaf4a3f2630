//! Citation keys used in the documentation.
//!
//! Every doc comment that points into a paper ("eq.", "Algorithm", "Prop.",
//! "Sec.", "Table", "Fig.", "App.", "Definition", "Thm.") names the paper
//! by one of these keys, e.g. `[Marfoq20] eq. (3)` is the arc delay of the
//! throughput paper and `[Lee21] Algorithm 3` is TornadoAggregate's
//! clustering. Numbers always refer to the cited paper's own numbering.
//! (In library sources the brackets are escaped, `\[Marfoq20\]`, so that
//! rustdoc does not read them as links.)
//!
//! # The papers this crate reproduces
//!
//! * **\[Marfoq20\]** Othmane Marfoq, Chuan Xu, Giovanni Neglia, Richard
//!   Vidal. *Throughput-Optimal Topology Design for Cross-Silo Federated
//!   Learning.* NeurIPS 2020. The underlay / connectivity / overlay model
//!   (Sec. 2.2), the arc delay eq. (3), the max-plus cycle time (Sec. 2.3,
//!   eq. 4), STAR, MST (Prop. 3.1), delta-MBST (Algorithm 1, delta-Prim
//!   Algorithm 2, App. D), RING (Prop. 3.3 / 3.6), the published time
//!   simulator (App. F, Algorithm 3), workloads (Table 2), cycle times
//!   (Tables 3, 6, 7), the MATCHA budget sweep (Table 10, App. H.6). Where a
//!   comment says "the paper" without a key, it means this one.
//! * **\[Wang19\]** Jianyu Wang, Anit Kumar Sahu, Zhouyuan Yang, Gauri Joshi,
//!   Soummya Kar. *MATCHA: Speeding Up Decentralized SGD via Matching
//!   Decomposition Sampling.* arXiv:1905.09435, 2019 (reference \[104\] of
//!   \[Marfoq20\], which compares against it; not in the paper set, read
//!   through \[Marfoq20\] App. G.3). Matching decomposition (Sec. 3), the
//!   activation-probability and mixing-weight problems (Sec. 4), `rho`.
//! * **\[Bellet21\]** Aurélien Bellet, Anne-Marie Kermarrec, Erick Lavoie.
//!   *D-Cliques: Compensating for Data Heterogeneity with Topology in
//!   Decentralized Federated Learning.* Preprint hal-03498160, 2021
//!   (numbering of the HAL version). D-SGD and Metropolis-Hastings weights
//!   (Sec. 2), skew (eq. 3), Greedy Swap (Algorithm 2), Clique Averaging
//!   (Sec. 3.4, Algorithm 3), inter-clique topologies (Sec. 3.3,
//!   Algorithm 4), extreme skew (Algorithm 5, App. C), evaluation (Sec. 4).
//! * **\[Lee21\]** Jin-woo Lee, Jaehoon Oh, Sungsu Lim, Se-Young Yun, Jae-Gil
//!   Lee. *TornadoAggregate: Accurate and Scalable Federated Learning via the
//!   Ring-Based Architecture.* AAAI 2021. Architectures (Table 1,
//!   Definitions 1-8), Tornado (Algorithm 1), Tornadoes (Algorithm 2),
//!   grouping (Algorithm 3, EMD eq. 32), clustering cost (Table 3), the nine
//!   methods (Table 4), aggregation (eq. 4).
//! * **\[BadieModiri24\]** Arash Badie-Modiri, Lorenzo Valerio, Chiara
//!   Boldrini, János Kertész, Márton Karsai. *Initialisation and Topology
//!   Effects in Decentralised Federated Learning.* arXiv preprint, 2024 (the
//!   year is inferred: the paper's text gives none and cites work of 2023).
//!   DecAvg (eq. 2), the stationary distribution and the initialisation gain
//!   (Sec. 4.1, eq. 3, Algorithm 1), random-graph families and the scaling
//!   exponents (Sec. 4.2, Fig. 5), failures (Fig. 2).
//!
//! # Topology families (the design work beyond \[Marfoq20\])
//!
//! * **\[Ying21\]** Bicheng Ying, Kun Yuan, Yiming Chen, Hanbin Hu, Pan Pan,
//!   Wotao Yin. *Exponential Graph is Provably Efficient for Decentralized
//!   Deep Training.* NeurIPS 2021. The static exponential graph (node `i`
//!   sends to `i + 2^k mod n`, `k < ceil(log2 n)`, uniform weights) and the
//!   one-peer exponential graph (one hop `2^(t mod tau)` per round, exact
//!   averaging after `tau` rounds when `n` is a power of two).
//! * **\[Takezawa23\]** Yuki Takezawa, Ryoma Sato, Han Bao, Kenta Niwa,
//!   Makoto Yamada. *Beyond Exponential Graph: Communication-Efficient
//!   Topologies for Decentralized Learning via Finite-time Convergence.*
//!   NeurIPS 2023 (arXiv:2305.11420; public code yukiTakezawa/BaseGraph).
//!   The k-peer hyper-hypercube, the simple Base-(k+1) graph and the
//!   Base-(k+1) graph: maximum degree `k`, exact consensus after a finite
//!   period for any `n`.
//! * **\[Song22\]** Zhuoqing Song, Weijian Li, Kexin Jin, Lei Shi, Ming Yan,
//!   Wotao Yin, Kun Yuan. *Communication-Efficient Topologies for
//!   Decentralized Learning with O(1) Consensus Rate* (EquiTopo). NeurIPS
//!   2022 (public code kexinjinnn/EquiTopo). D-EquiStatic (the average of
//!   `M` random circulant basis matrices `I/n + (n-1)/n P_u`) and OD-EquiDyn
//!   (one random basis matrix per round, mixed with the identity by `eta`);
//!   consensus rate independent of `n`.
//! * **\[Do23\]** Tuong Do, Binh X. Nguyen, Vuong Pham, Toan Tran, Erman
//!   Tjiputra, Quang D. Tran, Anh Nguyen. *Reducing Training Time in
//!   Cross-Silo Federated Learning using Multigraph Topology.* ICCV 2023
//!   (arXiv:2207.09657; public code aioz-ai/MultigraphFL, MIT). The
//!   multigraph of an overlay (Algorithm 1: `min(t_max, round(d_e / d_min))`
//!   edges per arc), its parsing into periodic states with isolated nodes
//!   (Algorithm 2), and the cycle times of Table 3 (an average over a fixed
//!   number of rounds of a per-round cycle mean, their code's
//!   `compute_cycle_time_multigraph`).
//!
//! # Other sources
//!
//! * **\[BCOQ92\]** François Baccelli, Guy Cohen, Geert Jan Olsder,
//!   Jean-Pierre Quadrat. *Synchronization and Linearity.* Wiley, 1992
//!   (cycle time of a max-plus linear system, Thm. 3.23).
//! * **\[Boyd04\]** Stephen Boyd, Persi Diaconis, Lin Xiao. *Fastest Mixing
//!   Markov Chain on a Graph.* SIAM Review 46(4), 2004 (the problem and its
//!   projected subgradient method; not in the paper set, section numbers
//!   are not cited).
//! * **\[Vogels22\]** Thijs Vogels, Hadrien Hendrikx, Martin Jaggi. *Beyond
//!   Spectral Gap: The Role of the Topology in Decentralized Learning.*
//!   NeurIPS 2022 (the effective number of neighbours; not in the paper set,
//!   read from `shared/notes/topology-families.md`).
//! * **\[BG92\]** Dimitri Bertsekas, Robert Gallager. *Data Networks*, 2nd
//!   ed. Prentice Hall, 1992 (max-min fair rates, Sec. 6.5.2).
//! * **\[Karp78\]** Richard M. Karp. *A characterization of the minimum
//!   cycle mean in a digraph.* Discrete Mathematics 23(3), 1978.
//! * **\[Li20\]** Tian Li, Anit Kumar Sahu, Manzil Zaheer, Maziar Sanjabi,
//!   Ameet Talwalkar, Virginia Smith. *Federated Optimization in
//!   Heterogeneous Networks* (FedProx). MLSys 2020 (the `Synthetic(alpha,
//!   beta)` data set, Sec. 5.1).
