;; A component whose core module's start function loops forever: loading
;; it fails within the plugin's timeout instead of hanging (the loop poll
;; moves the start function out of instantiation and runs it bounded).
(component
  (core module $m
    (memory 1)
    (func $spin (loop $l (br $l)))
    (start $spin)
    (func (export "noop")))
  (core instance $i (instantiate $m))
  (func (export "noop") (canon lift (core func $i "noop")))
)
