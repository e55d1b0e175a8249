module github.com/queryreplay/queryreplay

go 1.26.5

require github.com/alecthomas/kingpin/v2 v2.4.0

require (
	github.com/alecthomas/units v0.0.0-20211218093645-b94a6e3cc137 // indirect
	github.com/magefile/mage v1.17.2 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/xhit/go-str2duration/v2 v2.1.0 // indirect
)

tool github.com/magefile/mage
