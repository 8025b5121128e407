;; A resource defined by the guest: make(v) returns an own handle whose rep
;; is v, peek reads it through a borrow, and the destructor records the rep
;; of the last dropped handle (read back with last-dropped).
(component
  (core module $d
    (global $g (mut i32) (i32.const 0))
    (func (export "dtor") (param i32) (global.set $g (local.get 0)))
    (func (export "last") (result i32) (global.get $g)))
  (core instance $d (instantiate $d))
  (type $r (resource (rep i32) (dtor (func $d "dtor"))))
  (core func $new (canon resource.new $r))
  (core module $m
    (import "r" "new" (func $new (param i32) (result i32)))
    (func (export "make") (param i32) (result i32) (call $new (local.get 0)))
    ;; A borrow of a resource this component defines arrives as its rep.
    (func (export "peek") (param i32) (result i32) (local.get 0)))
  (core instance $i (instantiate $m (with "r" (instance (export "new" (func $new))))))
  (export $t "thing" (type $r))
  (func (export "make") (param "v" u32) (result (own $t)) (canon lift (core func $i "make")))
  (func (export "peek") (param "t" (borrow $t)) (result u32) (canon lift (core func $i "peek")))
  (func (export "last-dropped") (result u32) (canon lift (core func $d "last")))
)
