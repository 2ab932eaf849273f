//! Multi-device execution for balance mode (DESIGN.md §7): shadow contexts, replicas,
//! chunk launches and merging.
