module github.com/privacy-relay/sdk-go

go 1.22
