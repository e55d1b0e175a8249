package standin

// hasPageInfo: sys.dm_db_page_info exists on SQL Server 2019 (15.x) and
// later, Azure SQL Database and Azure SQL Managed Instance
// (https://learn.microsoft.com/en-us/sql/relational-databases/system-dynamic-management-views/sys-dm-db-page-info-transact-sql);
// older box versions answer Msg 208 for it.
func (p *Persona) hasPageInfo() bool {
	return p.Version.Major >= 15 || p.EngineEdition == 5 || p.EngineEdition == 8
}
