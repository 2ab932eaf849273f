//! Pure, event-driven chunk scheduling (Boyer, dissertation ch. 4) and its baselines, with a
//! discrete-event simulator. No OpenCL calls inside.
