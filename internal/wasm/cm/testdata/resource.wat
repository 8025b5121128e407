;; run() makes a host counter, reads it through a borrow and drops it, so
;; the host destructor runs; keep(start) hands its counter to the host
;; (own), which takes it over, so no destructor runs.
(component
  (import "mur:test/res@0.1.0" (instance $res
    (export "counter" (type $c (sub resource)))
    (export "make" (func (param "start" u32) (result (own $c))))
    (export "get" (func (param "self" (borrow $c)) (result u32)))
    (export "consume" (func (param "c" (own $c)) (result u32)))
  ))
  (alias export $res "counter" (type $counter))
  (core func $make (canon lower (func $res "make")))
  (core func $get (canon lower (func $res "get")))
  (core func $drop (canon resource.drop $counter))
  (core func $consume (canon lower (func $res "consume")))
  (core module $m
    (import "r" "make" (func $make (param i32) (result i32)))
    (import "r" "get" (func $get (param i32) (result i32)))
    (import "r" "drop" (func $drop (param i32)))
    (import "r" "consume" (func $consume (param i32) (result i32)))
    (func (export "keep") (param i32) (result i32)
      (call $consume (call $make (local.get 0))))
    (func (export "run") (param i32) (result i32) (local $h i32) (local $v i32)
      (local.set $h (call $make (local.get 0)))
      (local.set $v (call $get (local.get $h)))
      (call $drop (local.get $h))
      (local.get $v))
  )
  (core instance $r (export "make" (func $make)) (export "get" (func $get)) (export "drop" (func $drop)) (export "consume" (func $consume)))
  (core instance $i (instantiate $m (with "r" (instance $r))))
  (func (export "run") (param "start" u32) (result u32) (canon lift (core func $i "run")))
  (func (export "keep") (param "start" u32) (result u32) (canon lift (core func $i "keep")))
)
