;; A component whose core module loops but has no memory: the loop poll
;; cannot rewrite it (its poll needs memory.grow), so the component runs
;; under wazero's close-on-done, which still stops the loop.
(component
  (core module $m
    (func (export "spin") (loop $l (br $l))))
  (core instance $i (instantiate $m))
  (func (export "spin") (canon lift (core func $i "spin")))
)
