//! Price catalogue, pricing formulas and the cluster planner.
