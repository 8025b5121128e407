;; A script capsule that pulls through murmur:artifact-manager/manage@0.1.0:
;; its run calls pull("%PULL%", "") and traps unless it returns ok, then
;; invoke("%CALL%", {data: "{}"}) and traps unless that returns ok with
;; status passed, then pull("%DENY%", "") and traps unless that returns
;; err. The test replaces %PULL%, %CALL%, %DENY% and their lengths.
(component
  (import "murmur:tool-registry/invoke@0.1.0" (instance $reg
    (type $st (enum "passed" "failed" "error"))
    (export "status" (type $st-e (eq $st)))
    (type $in (record (field "data" (option string)) (field "log-path" (option string))))
    (export "tool-input" (type $in-e (eq $in)))
    (type $res (record (field "status" $st-e) (field "summary" (option string)) (field "data" (option string))
      (field "data-path" (option string)) (field "truncated" bool) (field "metadata" (list (tuple string string)))))
    (export "tool-result" (type $res-e (eq $res)))
    (export "invoke" (func (param "name" string) (param "input" $in-e) (result (result $res-e (error string)))))
  ))
  (import "murmur:artifact-manager/manage@0.1.0" (instance $mgr
    (type $rt (enum "wasm" "native"))
    (export "runtime-type" (type $rt-e (eq $rt)))
    (type $sum (record (field "name" string) (field "version" string) (field "runtime" $rt-e)))
    (export "artifact-summary" (type $sum-e (eq $sum)))
    (export "pull" (func (param "name" string) (param "version" string) (result (result $sum-e (error string)))))
  ))
  (core module $libc
    (memory (export "mem") 1)
    (global $bump (mut i32) (i32.const 8192))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      global.get $bump
      i32.const 7 i32.add i32.const -8 i32.and
      local.tee $p
      local.get 3 i32.add
      global.set $bump
      local.get $p))
  (core instance $libc (instantiate $libc))
  (alias core export $libc "mem" (core memory $mem))
  (alias core export $libc "realloc" (core func $realloc))
  (core func $invoke (canon lower (func $reg "invoke") (memory $mem) (realloc $realloc)))
  (core func $pull (canon lower (func $mgr "pull") (memory $mem) (realloc $realloc)))
  (core module $m
    (import "libc" "mem" (memory 1))
    (import "reg" "invoke" (func $invoke (param i32 i32 i32 i32 i32 i32 i32 i32 i32)))
    (import "mgr" "pull" (func $pull (param i32 i32 i32 i32 i32)))
    (data (i32.const 1000) "%PULL%")
    (data (i32.const 1200) "%CALL%")
    (data (i32.const 1400) "{}")
    (data (i32.const 1600) "%DENY%")
    (func (export "run")
      (call $pull (i32.const 1000) (i32.const %PULLLEN%) (i32.const 1400) (i32.const 0) (i32.const 2000))
      (if (i32.load8_u (i32.const 2000)) (then unreachable))
      (call $invoke (i32.const 1200) (i32.const %CALLLEN%)
        (i32.const 1) (i32.const 1400) (i32.const 2)
        (i32.const 0) (i32.const 0) (i32.const 0)
        (i32.const 3000))
      (if (i32.load8_u (i32.const 3000)) (then unreachable))
      (if (i32.load8_u (i32.const 3004)) (then unreachable))
      (call $pull (i32.const 1600) (i32.const %DENYLEN%) (i32.const 1400) (i32.const 0) (i32.const 4000))
      (if (i32.eqz (i32.load8_u (i32.const 4000))) (then unreachable))))
  (core instance $ri (export "invoke" (func $invoke)))
  (core instance $mi (export "pull" (func $pull)))
  (core instance $i (instantiate $m (with "libc" (instance $libc)) (with "reg" (instance $ri)) (with "mgr" (instance $mi))))
  (func $run (canon lift (core func $i "run")))
  (instance $cap (export "run" (func $run)))
  (export "murmur:capsule/run@0.1.0" (instance $cap))
)
