;; Resource-exhaustion guests, run with WASI defined on the linker to show
;; the store's limits still bound them: spin never returns, balloon grows
;; memory until refused and returns its page count, grow-table grows a table
;; until refused and returns its size, and $many instantiates a core module
;; 8 times (for the instance limit).
(component
  (core module $m
    (memory 1)
    (table 1 funcref)
    (func (export "spin") (loop $l (br $l)))
    (func (export "balloon") (result i32)
      (block $done
        (loop $l
          (br_if $done (i32.eq (memory.grow (i32.const 16)) (i32.const -1)))
          (br $l)))
      (memory.size))
    (func (export "grow-table") (result i32)
      (block $done
        (loop $l
          (br_if $done (i32.eq (table.grow (ref.null func) (i32.const 1000)) (i32.const -1)))
          (br $l)))
      (table.size))
  )
  (core instance $i (instantiate $m))
  (core module $tiny)
  (core instance (instantiate $tiny))
  (core instance (instantiate $tiny))
  (core instance (instantiate $tiny))
  (core instance (instantiate $tiny))
  (core instance (instantiate $tiny))
  (core instance (instantiate $tiny))
  (core instance (instantiate $tiny))
  (core instance (instantiate $tiny))
  (func (export "spin") (canon lift (core func $i "spin")))
  (func (export "balloon") (result u32) (canon lift (core func $i "balloon")))
  (func (export "grow-table") (result u32) (canon lift (core func $i "grow-table")))
)
