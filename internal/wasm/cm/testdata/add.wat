;; add(a, b) = double(a + b), where double is a host function imported from
;; the interface mur:test/host@0.1.2.
(component
  (import "mur:test/host@0.1.2" (instance $host
    (export "double" (func (param "x" u32) (result u32)))
  ))
  (core func $double (canon lower (func $host "double")))
  (core module $m
    (import "host" "double" (func $double (param i32) (result i32)))
    (func (export "add") (param i32 i32) (result i32)
      local.get 0
      local.get 1
      i32.add
      call $double)
    (func (export "noop"))
  )
  (core instance $hi (export "double" (func $double)))
  (core instance $i (instantiate $m (with "host" (instance $hi))))
  (func (export "add") (param "a" u32) (param "b" u32) (result u32)
    (canon lift (core func $i "add")))
  (func (export "noop") (canon lift (core func $i "noop")))
)
