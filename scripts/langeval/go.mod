module github.com/wirecrawl/wire/scripts/langeval

go 1.26.8

require (
	github.com/abadojack/whatlanggo v1.0.1
	github.com/pemistahl/lingua-go v1.4.0
	github.com/wirecrawl/wire v0.0.0
	google.golang.org/protobuf v1.36.8
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/nlnwa/whatwg-url v0.5.0 // indirect
	github.com/shopspring/decimal v1.3.1 // indirect
	github.com/wlynxg/chardet v1.0.5 // indirect
	golang.org/x/exp v0.0.0-20221106115401-f9659909a136 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/wirecrawl/wire => ../..
