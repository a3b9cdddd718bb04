;; startspin.wat without a memory: the loop poll cannot rewrite it, so its
;; start function runs inside instantiation under wazero's close-on-done,
;; which the instance's time limit still stops.
(component
  (core module $m
    (func $spin (loop $l (br $l)))
    (start $spin)
    (func (export "noop")))
  (core instance $i (instantiate $m))
  (func (export "noop") (canon lift (core func $i "noop")))
)
