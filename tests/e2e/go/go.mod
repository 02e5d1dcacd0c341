module spaa-relay/tests/pprofgen

go 1.19
