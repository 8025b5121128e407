;; Guests that misbehave: spin forever, balloon memory, grow a table
;; without end, trap.
(component
  (core module $m
    (memory 1)
    (table 1 funcref)
    (func (export "spin") (loop (br 0)))
    (func (export "balloon")
      (loop
        (br_if 0 (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
      unreachable)
    (func (export "grow-table")
      (loop
        (br_if 0 (i32.ne (table.grow (ref.null func) (i32.const 1)) (i32.const -1))))
      unreachable)
    (func (export "trap") unreachable)
  )
  (core instance $i (instantiate $m))
  (func (export "spin") (canon lift (core func $i "spin")))
  (func (export "balloon") (canon lift (core func $i "balloon")))
  (func (export "grow-table") (canon lift (core func $i "grow-table")))
  (func (export "trap") (canon lift (core func $i "trap")))
)
