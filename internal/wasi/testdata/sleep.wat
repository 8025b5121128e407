;; sleep(ns) blocks in wasi:io/poll on a monotonic-clock pollable, so a test
;; can check that a guest parked in the host still ends with its call.
(component $root
  (import "wasi:io/poll@0.2.0" (instance $poll
    (export "pollable" (type $p (sub resource)))
    (export "[method]pollable.block" (func (param "self" (borrow $p))))
  ))
  (alias export $poll "pollable" (type $pollable))
  (import "wasi:clocks/monotonic-clock@0.2.0" (instance $clock
    (alias outer $root $pollable (type $p'))
    (export "pollable" (type $p (eq $p')))
    (export "subscribe-duration" (func (param "when" u64) (result (own $p))))
    (export "now" (func (result u64)))
  ))
  (core func $subscribe (canon lower (func $clock "subscribe-duration")))
  (core func $block (canon lower (func $poll "[method]pollable.block")))
  (core func $now (canon lower (func $clock "now")))
  (core module $m
    (import "w" "subscribe" (func $subscribe (param i64) (result i32)))
    (import "w" "block" (func $block (param i32)))
    (import "w" "now" (func $now (result i64)))
    ;; returns the monotonic nanoseconds spent blocked
    (func (export "sleep") (param $ns i64) (result i64)
      (local $t0 i64)
      (local.set $t0 (call $now))
      (call $block (call $subscribe (local.get $ns)))
      (i64.sub (call $now) (local.get $t0)))
  )
  (core instance $i (instantiate $m
    (with "w" (instance
      (export "subscribe" (func $subscribe))
      (export "block" (func $block))
      (export "now" (func $now))))))
  (func (export "sleep") (param "ns" u64) (result u64) (canon lift (core func $i "sleep")))
)
