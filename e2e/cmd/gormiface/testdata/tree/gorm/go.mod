module gorm.io/gorm

go 1.26.8
